package graph_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/google/go-cmp/cmp"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/graph"
	"mirrorql/model"
)

// callRows are the rows of TestLoaderCalls: topics 0.0.1001–0.0.1020 of 120
// messages each, those from sequence number 4 on chunks of two, and 120
// schedules with two signatures each.
func callRows() *memstore.Store {
	s := memstore.New()
	one, two := int32(1), int32(2)
	for t := model.EntityID(1001); t <= 1020; t++ {
		s.AddTopics(model.Topic{ID: t, HasTopic: true, HasEntity: true, HasCustomFee: true})
		for seq := int64(1); seq <= 120; seq++ {
			m := model.TopicMessage{TopicID: t, SequenceNumber: seq, ConsensusTimestamp: model.Timestamp(int64(t)*1_000_000 + seq),
				Message: []byte{byte(seq)}, RunningHash: []byte{1}}
			if seq >= 4 {
				first := seq - (seq-4)%2 // the first chunk of the pair
				m.ChunkNum, m.ChunkTotal = &one, &two
				if seq != first {
					m.ChunkNum = &two
				}
				m.InitialTransactionID = []byte{byte(t), byte(first)}
			}
			s.AddMessages(m)
		}
	}
	for id := model.EntityID(2001); id <= 2120; id++ {
		s.AddSchedules(model.Schedule{ScheduleID: id, CreatorAccountID: 2, PayerAccountID: 2, ConsensusTimestamp: 1,
			Signatures: []model.Signature{{EntityID: id, ConsensusTimestamp: 2}, {EntityID: id, ConsensusTimestamp: 3}}})
	}
	return s
}

// TestLoaderCalls is what the dataloaders promise, on any layout: a page
// asks the core a fixed set of questions, each once, whatever its size (the
// first node of a page starts its siblings' loads). On v1 each of those
// calls is one statement (TestStatementCounts); on v2 the query layer
// answers some of them with a statement per topic or per partition
// (docs/layouts.md, "several topics at once"), so there the promise is this
// one: the calls stay fixed, the statements grow with the topics and
// partitions a page touches, never with its nesting.
//
// The loaders wait 20 ms, as in TestStatementCounts, so that a loop
// preempted on a busy machine does not split a batch.
func TestLoaderCalls(t *testing.T) {
	t.Parallel()
	store := callRows()
	h := graph.NewHandler(app.New(store, app.Rules{}), graph.Options{LoaderWait: 20 * time.Millisecond})
	c := client.New(h)
	tests := []struct {
		name  string
		query string
		sizes []int
		want  map[string]int // questions asked of the store, for every page size
		nodes string         // the list whose length is the page size
	}{
		{
			name: "messages with their topics",
			query: `query($n: Int) { list: topicMessages(topicId: "0.0.1001", first: $n) {
				nodes { sequenceNumber topic { id memo adminKey { key } } } } }`,
			sizes: []int{1, 10, 50, 100},
			want:  map[string]int{"MessagesOfTopic": 1, "TopicsByID": 1},
		},
		{
			name:  "schedules with their signatures",
			query: `query($n: Int) { list: schedules(first: $n) { nodes { id status signatures { signature type } } } }`,
			sizes: []int{1, 10, 50, 100},
			want:  map[string]int{"Schedules": 1}, // the signatures come with the page
		},
		{
			name: "messages with their chunks and full messages",
			query: `query($n: Int) { list: topicMessages(topicId: "0.0.1001", sequenceNumber: {gte: 4}, first: $n) {
				nodes { chunks { sequenceNumber } fullMessage } } }`,
			sizes: []int{1, 10, 50, 66}, // 66 × 3 is within the complexity limit
			want:  map[string]int{"MessagesOfTopic": 1, "ChunksOf": 1},
		},
		{
			name: "topics with their messages, and those messages' topics",
			query: `query($n: Int) { list: topics(first: $n) { nodes { id message(sequenceNumber: 3) { sequenceNumber }
				messages(first: 3) { nodes { sequenceNumber topic { id } } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  map[string]int{"Topics": 1, "MessagesBySequence": 1, "MessagesOfTopics": 1, "TopicsByID": 1},
		},
		{
			name: "topics with their message counts and latest messages, and those messages' topics",
			query: `query($n: Int) { list: topics(first: $n) { nodes { id messageCount
				latestMessage { sequenceNumber topic { id } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  map[string]int{"Topics": 1, "LatestMessages": 1, "TopicsByID": 1},
		},
		{
			name: "topics with their messages' chunks, and those chunks' topics",
			query: `query($n: Int) { list: topics(first: $n) { nodes { id messages(first: 3, sequenceNumber: {gte: 4}) {
				nodes { sequenceNumber chunks { sequenceNumber topic { id } } } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  map[string]int{"Topics": 1, "MessagesOfTopics": 1, "ChunksOf": 1, "TopicsByID": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range tc.sizes {
				before := store.Calls()
				resp, err := c.RawPost(tc.query, client.Var("n", n))
				if err != nil || len(resp.Errors) > 0 && string(resp.Errors) != "null" {
					t.Fatalf("first %d: %v %s", n, err, resp.Errors)
				}
				got := map[string]int{}
				for q, k := range store.Calls() {
					if k > before[q] {
						got[q] = k - before[q]
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("first %d: calls (-want +got):\n%s", n, diff)
				}
				var data struct {
					List struct{ Nodes []json.RawMessage } `json:"list"`
				}
				raw, _ := json.Marshal(resp.Data)
				if err := json.Unmarshal(raw, &data); err != nil || len(data.List.Nodes) != n {
					t.Errorf("first %d: %d nodes (%v)", n, len(data.List.Nodes), err)
				}
			}
		})
	}
}

// TestLoneNodesLoadAtOnce: a node that came alone (a single lookup's) has no
// siblings to batch with, so its nested fields are asked of the core at
// once, not after the loaders' wait, and each question once however many
// fields ask it. The loaders here wait 30 s: a lone node that waited for
// them would take that long.
func TestLoneNodesLoadAtOnce(t *testing.T) {
	t.Parallel()
	store := callRows()
	h := graph.NewHandler(app.New(store, app.Rules{}), graph.Options{LoaderWait: 30 * time.Second})
	c := client.New(h)
	tests := []struct {
		name  string
		query string
		want  map[string]int
	}{
		{"a topic's page, count and latest message", `{ topic(id: "0.0.1001") { messages(first: 3) { nodes { sequenceNumber } }
			again: messages(first: 3) { nodes { sequenceNumber } } messageCount latestMessage { sequenceNumber }
			message(sequenceNumber: 2) { sequenceNumber } m: message(sequenceNumber: 2) { topicId } } }`,
			map[string]int{"TopicsByID": 1, "MessagesOfTopics": 1, "LatestMessages": 1, "MessagesBySequence": 1}},
		{"a message's topic and chunks", `{ topicMessage(topicId: "0.0.1001", sequenceNumber: 5) { topic { id } t: topic { memo }
			chunks { sequenceNumber } fullMessage } }`,
			map[string]int{"MessageBySequence": 1, "TopicsByID": 1, "ChunksOf": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := store.Calls()
			start := time.Now()
			resp, err := c.RawPost(tc.query)
			took := time.Since(start)
			if err != nil || len(resp.Errors) > 0 && string(resp.Errors) != "null" {
				t.Fatalf("%v %s", err, resp.Errors)
			}
			if took > 15*time.Second {
				t.Errorf("took %v: a lone node waited for the loaders", took)
			}
			got := map[string]int{}
			for q, k := range store.Calls() {
				if k > before[q] {
					got[q] = k - before[q]
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
