package app

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mirrorql/model"
)

func TestProblemsOrder(t *testing.T) {
	var p Problems
	if p.Err() != nil {
		t.Fatal("no problems, an error")
	}
	p.Unknown("topic.id")
	p.Invalid("sequencenumber")
	p.Message(`Invalid entity ID "0.0.x"`)
	p.Unknown("foo")
	p.Invalid("limit")
	var br *BadRequest
	if !errors.As(p.Err(), &br) {
		t.Fatalf("%T, want *BadRequest", p.Err())
	}
	want := []string{"Invalid parameter: sequencenumber", `Invalid entity ID "0.0.x"`, "Invalid parameter: limit",
		"Unknown query parameter: topic.id", "Unknown query parameter: foo"}
	if diff := cmp.Diff(want, br.Messages); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPageSizes(t *testing.T) {
	s := PageSizes{}.WithDefaults()
	if s != (PageSizes{Default: 25, Max: 100}) {
		t.Fatalf("defaults %+v", s)
	}
	if got := (PageSizes{Max: 10}).WithDefaults(); got.Default != 10 {
		t.Errorf("default above the maximum: %+v", got)
	}
	ptr := func(n int64) *int64 { return &n }
	tests := []struct {
		in       *int64
		size     int
		ok       bool
		estimate int
	}{
		{nil, 25, true, 25}, {ptr(1), 1, true, 1}, {ptr(100), 100, true, 100}, {ptr(101), 100, true, 100},
		{ptr(1 << 62), 100, true, 100}, {ptr(0), 0, false, 1}, {ptr(-5), 0, false, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			size, ok := s.Requested(tt.in)
			if size != tt.size || ok != tt.ok {
				t.Errorf("Requested = %d, %v; want %d, %v", size, ok, tt.size, tt.ok)
			}
			if got := s.Estimate(tt.in); got != tt.estimate {
				t.Errorf("Estimate = %d, want %d", got, tt.estimate)
			}
		})
	}
}

func TestPaging(t *testing.T) {
	if got := After(model.Asc, model.Timestamp(5)); got != (model.Condition[model.Timestamp]{Op: model.OpGt, Value: 5}) {
		t.Errorf("asc: %+v", got)
	}
	if got := After(model.Desc, model.EntityID(5)); got != (model.Condition[model.EntityID]{Op: model.OpLt, Value: 5}) {
		t.Errorf("desc: %+v", got)
	}
	rows := []model.TopicMessage{{ConsensusTimestamp: 1}, {ConsensusTimestamp: 2}, {ConsensusTimestamp: 3}}
	tests := []struct {
		name       string
		q          MessageQuery
		rows       []model.TopicMessage
		n          int
		full, more bool
		next       model.Condition[model.Timestamp]
	}{
		{"full page", MessageQuery{Limit: 3}, rows, 3, true, false, model.Condition[model.Timestamp]{Op: model.OpGt, Value: 3}},
		{"short page", MessageQuery{Limit: 4, Order: model.Desc}, rows, 3, false, false, model.Condition[model.Timestamp]{Op: model.OpLt, Value: 3}},
		{"lookahead found more", MessageQuery{Limit: 2, Lookahead: true}, rows, 2, true, true, model.Condition[model.Timestamp]{Op: model.OpGt, Value: 2}},
		{"lookahead found no more", MessageQuery{Limit: 3, Lookahead: true}, rows, 3, true, false, model.Condition[model.Timestamp]{Op: model.OpGt, Value: 3}},
		{"empty", MessageQuery{Limit: 3}, nil, 0, false, false, model.Condition[model.Timestamp]{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.q.page(tt.rows)
			if len(p.Rows) != tt.n || p.Full != tt.full || p.More != tt.more || p.Next != tt.next {
				t.Errorf("rows %d full %v more %v next %+v", len(p.Rows), p.Full, p.More, p.Next)
			}
		})
	}
	if f, ok := (&MessageQuery{Limit: 25, Lookahead: true}).Filter(); !ok || f.Limit != 26 {
		t.Errorf("lookahead filter limit %d (ok %v)", f.Limit, ok)
	}
}

// TestMessageQueryFilter: the store's filter carries the conditions reduced,
// a column without any as no range, and none when they admit no message.
func TestMessageQueryFilter(t *testing.T) {
	seq := func(op model.Operator, v int64) model.Condition[int64] {
		return model.Condition[int64]{Op: op, Value: v}
	}
	ts := func(op model.Operator, v model.Timestamp) model.Condition[model.Timestamp] {
		return model.Condition[model.Timestamp]{Op: op, Value: v}
	}
	tests := []struct {
		name string
		q    MessageQuery
		want MessageFilter
		ok   bool
	}{
		{"no condition", MessageQuery{TopicID: 7, Order: model.Desc, Limit: 5},
			MessageFilter{TopicID: 7, Order: model.Desc, Limit: 5}, true},
		{"sequence numbers", MessageQuery{TopicID: 7, Limit: 5, SequenceNumber: []model.Condition[int64]{seq(model.OpGt, 2), seq(model.OpLte, 9), seq(model.OpNe, 4)}},
			MessageFilter{TopicID: 7, Limit: 5, SequenceNumber: &model.Range{Lo: 3, Hi: 9, Not: []int64{4}}}, true},
		{"timestamps", MessageQuery{TopicID: 7, Limit: 5, Timestamp: []model.Condition[model.Timestamp]{ts(model.OpGte, 10)}},
			MessageFilter{TopicID: 7, Limit: 5, Timestamp: &model.Range{Lo: 10, Hi: math.MaxInt64}}, true},
		{"sequence numbers admit none", MessageQuery{TopicID: 7, Limit: 5,
			SequenceNumber: []model.Condition[int64]{seq(model.OpGt, 5), seq(model.OpLt, 3)}, Timestamp: []model.Condition[model.Timestamp]{ts(model.OpGte, 10)}},
			MessageFilter{}, false},
		{"timestamps admit none", MessageQuery{TopicID: 7, Limit: 5, Timestamp: []model.Condition[model.Timestamp]{ts(model.OpEq, 10), ts(model.OpNe, 10)}},
			MessageFilter{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := tt.q.Filter()
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, f); ok && diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEntityIDError(t *testing.T) {
	_, err := model.EntityDefaults{}.ParseEntityID("0.0.99999999999999", false)
	if err == nil {
		t.Fatal("the parser accepts the id")
	}
	var inv *model.InvalidEntityIDError
	if !errors.As(err, &inv) {
		t.Fatalf("%T", err)
	}
	if got := EntityIDError(err, "").Messages; len(got) != 1 || got[0] != inv.Error() {
		t.Errorf("unnamed: %v", got)
	}
	if got := EntityIDError(err, "scheduleid").Messages; len(got) != 1 || got[0] != "Invalid parameter: scheduleid" {
		t.Errorf("named: %v", got)
	}
}

func TestSubscriptionArgs(t *testing.T) {
	const now = model.Timestamp(2000_000000000)
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		args SubscriptionArgs
		want Subscription
		msgs []string
	}{
		{"defaults", SubscriptionArgs{Topic: "7"}, Subscription{Topic: 7, Start: now}, nil},
		{"all given", SubscriptionArgs{Topic: "0.0.7", Start: s("1000"), End: s("1500.5"), Limit: s("3")},
			Subscription{Topic: 7, Start: 1000_000000000, End: 1500_500000000, Limit: 3}, nil},
		{"malformed values in order", SubscriptionArgs{Topic: "x", Start: s("a"), End: s("b"), Limit: s("c")}, Subscription{},
			[]string{"Invalid parameter: topic.id", "Invalid parameter: consensusStartTime", "Invalid parameter: consensusEndTime",
				"Invalid parameter: limit"}},
		{"negative limit", SubscriptionArgs{Topic: "7", Limit: s("-1")}, Subscription{},
			[]string{"limit must be greater than or equal to 0"}},
		{"start in the future", SubscriptionArgs{Topic: "7", Start: s("3000")}, Subscription{},
			[]string{"Start time must be before the current time"}},
		{"end before start", SubscriptionArgs{Topic: "7", Start: s("1000"), End: s("1000")}, Subscription{},
			[]string{"End time must be after start time"}},
		{"range checks wait for valid values", SubscriptionArgs{Topic: "7", Start: s("3000"), Limit: s("x")}, Subscription{},
			[]string{"Invalid parameter: limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.args.Check(Rules{}, now)
			var msgs []string
			var br *BadRequest
			if errors.As(err, &br) {
				msgs = br.Messages
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.msgs, msgs); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzSubscriptionArgs(f *testing.F) {
	f.Add("7", "1000", "2000", "5")
	f.Add("0.0.x", "1e3", "", "-1")
	f.Fuzz(func(t *testing.T, topic, start, end, limit string) {
		args := SubscriptionArgs{Topic: topic, Start: &start, End: &end, Limit: &limit}
		s, err := args.Check(Rules{}, 2000_000000000)
		var br *BadRequest
		switch {
		case err == nil:
			if s.Limit < 0 || s.End <= s.Start || s.Start > 2000_000000000 {
				t.Fatalf("accepted %+v", s)
			}
		case !errors.As(err, &br) || len(br.Messages) == 0:
			t.Fatalf("error %T %v", err, err)
		}
	})
}
