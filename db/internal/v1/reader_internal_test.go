package v1

import (
	"slices"
	"testing"

	"mirrorql/model"
)

// TestGroupByTopic: each topic's rows, in order, whether its rows come in
// one run (handed over without a copy) or in several; appending to one
// topic's rows never overwrites the next topic's.
func TestGroupByTopic(t *testing.T) {
	row := func(topic, seq int64) model.TopicMessage {
		return model.TopicMessage{TopicID: model.EntityID(topic), SequenceNumber: seq}
	}
	rows := []model.TopicMessage{row(7, 1), row(7, 2), row(8, 1), row(9, 1), row(9, 2), row(7, 3)}
	out := map[model.EntityID][]model.TopicMessage{}
	groupByTopic(out, rows)
	want := map[model.EntityID][]int64{7: {1, 2, 3}, 8: {1}, 9: {1, 2}}
	if len(out) != len(want) {
		t.Fatalf("%d topics, want %d", len(out), len(want))
	}
	for id, seqs := range want {
		var got []int64
		for _, m := range out[id] {
			if m.TopicID != id {
				t.Errorf("topic %d holds a row of %d", id, m.TopicID)
			}
			got = append(got, m.SequenceNumber)
		}
		if !slices.Equal(got, seqs) {
			t.Errorf("topic %d: %v, want %v", id, got, seqs)
		}
	}
	if &out[8][0] != &rows[2] || &out[9][0] != &rows[3] {
		t.Errorf("a topic in one run was copied")
	}
	out[8] = append(out[8], row(8, 2))
	if rows[3].TopicID != 9 {
		t.Errorf("appending to topic 8's rows overwrote topic 9's")
	}
}
