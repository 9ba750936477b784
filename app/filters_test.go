package app

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mirrorql/model"
)

type filterValue struct {
	name string
	op   model.Operator
	raw  string
}

func TestFilters(t *testing.T) {
	id := func(n int64) model.EntityID { return model.EntityID(n) }
	tests := []struct {
		name      string
		values    []filterValue
		problems  []string
		messages  MessageQuery
		schedules ScheduleQuery
		topics    TopicQuery
		idErr     string // the entity-id step's message
	}{
		{name: "none"},
		{name: "messages, repeated and every operator",
			values: []filterValue{{ParamSequenceNumber, model.OpGte, "0"}, {ParamSequenceNumber, model.OpLt, "10"},
				{ParamTimestamp, model.OpEq, "1.5"}, {ParamTimestamp, model.OpNe, "2"}},
			messages: MessageQuery{
				SequenceNumber: []model.Condition[int64]{{Op: model.OpGte, Value: 0}, {Op: model.OpLt, Value: 10}},
				Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpEq, Value: 1_500000000},
					{Op: model.OpNe, Value: 2_000000000}}}},
		{name: "refused values in order, each reported",
			values: []filterValue{{ParamTimestamp, model.OpEq, "x"}, {ParamSequenceNumber, model.OpEq, "-1"},
				{ParamTimestamp, model.OpEq, "1"}, {ParamScheduleID, model.OpEq, "0.0.x"}, {ParamTopicID, model.OpEq, "0x" + "00000000000000000000000000000000000003e9"}},
			problems: []string{"Invalid parameter: timestamp", "Invalid parameter: sequencenumber",
				"Invalid parameter: schedule.id", "Invalid parameter: topic.id"},
			messages: MessageQuery{
				Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpEq, Value: 1_000000000}}}},
		{name: "schedule and account ids in order",
			values: []filterValue{{ParamAccountID, model.OpGt, "5"}, {ParamScheduleID, model.OpLte, "0.0.9"},
				{ParamScheduleID, model.OpNe, "0.7"}},
			schedules: ScheduleQuery{ScheduleFilter: ScheduleFilter{
				ScheduleID:       []model.Condition[model.EntityID]{{Op: model.OpLte, Value: id(9)}, {Op: model.OpNe, Value: id(7)}},
				CreatorAccountID: []model.Condition[model.EntityID]{{Op: model.OpGt, Value: id(5)}}}},
			topics: TopicQuery{TopicFilter: TopicFilter{ID: []model.Condition[model.EntityID]{{Op: model.OpGt, Value: id(5)},
				{Op: model.OpLte, Value: id(9)}, {Op: model.OpNe, Value: id(7)}}}}},
		{name: "an opaque EVM address matches nothing",
			values: []filterValue{{ParamScheduleID, model.OpEq, "0x" + "71c7656ec7ab88b098defb751b7401b5f6d8976f"},
				{ParamAccountID, model.OpEq, "3"}},
			schedules: ScheduleQuery{ScheduleFilter: ScheduleFilter{NoMatch: true,
				CreatorAccountID: []model.Condition[model.EntityID]{{Op: model.OpEq, Value: id(3)}}}},
			topics: TopicQuery{TopicFilter: TopicFilter{ID: []model.Condition[model.EntityID]{{Op: model.OpEq, Value: id(3)}}}}},
		{name: "an id the parser refuses",
			values: []filterValue{{ParamScheduleID, model.OpEq, "0.0.999999999999"}},
			idErr:  `Invalid entity ID "0.0.999999999999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Filters
			var p Problems
			for _, v := range tt.values {
				f.Add(&p, v.name, v.op, v.raw)
			}
			var got []string
			var br *BadRequest
			if errors.As(p.Err(), &br) {
				got = br.Messages
			}
			if diff := cmp.Diff(tt.problems, got); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			var mq MessageQuery
			f.Messages(&mq)
			if diff := cmp.Diff(tt.messages, mq); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			var sq ScheduleQuery
			var tq TopicQuery
			serr, terr := f.Schedules(model.EntityDefaults{}, &sq), f.Topics(model.EntityDefaults{}, &tq)
			if tt.idErr != "" {
				for _, err := range []error{serr, terr} {
					if !errors.As(err, &br) || len(br.Messages) != 1 || br.Messages[0] != tt.idErr {
						t.Errorf("entity-id error %v, want %q", err, tt.idErr)
					}
				}
				return
			}
			if serr != nil || terr != nil {
				t.Fatal(serr, terr)
			}
			if diff := cmp.Diff(tt.schedules, sq); diff != "" {
				t.Errorf("schedules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.topics, tq); diff != "" {
				t.Errorf("topics (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzFilters: any value is either a condition or one problem under its
// name, and the entity-id step never panics.
func FuzzFilters(f *testing.F) {
	for _, s := range []string{"0", "1.5", "0.0.7", "0x71c7656ec7ab88b098defb751b7401b5f6d8976f", "-1", "", "1e3"} {
		f.Add(uint8(0), s)
	}
	names := []string{ParamSequenceNumber, ParamTimestamp, ParamScheduleID, ParamAccountID, ParamTopicID, "other"}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		name := names[int(which)%len(names)]
		var fs Filters
		var p Problems
		fs.Add(&p, name, model.OpGt, raw)
		n := len(fs.seq) + len(fs.ts) + len(fs.ids)
		if p.Any() == (n == 1) || n > 1 {
			t.Fatalf("%s=%q: %d conditions, problems %v", name, raw, n, p.Err())
		}
		var sq ScheduleQuery
		var tq TopicQuery
		_ = fs.Schedules(model.EntityDefaults{}, &sq)
		_ = fs.Topics(model.EntityDefaults{}, &tq)
	})
}
