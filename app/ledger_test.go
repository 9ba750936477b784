package app_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/model"
)

// The ledger's rows: topic 7 with five messages (4 and 5 the two chunks of
// one logical message), topic 8 without messages, topic 9 with a topic row
// alone, messages of topic 11 without any entity row, account 2, a failed
// submit and a later transfer (the ledger's head), and three schedules.
const base = model.Timestamp(1_700_000_000_000000000)

var (
	one, two = int32(1), int32(2)
	creator2 = model.EntityID(2)
	memo     = "s"
)

func message(topic model.EntityID, seq int64) model.TopicMessage {
	m := model.TopicMessage{TopicID: topic, SequenceNumber: seq, ConsensusTimestamp: base + model.Timestamp(topic)*1000 + model.Timestamp(seq),
		Message: []byte(fmt.Sprintf("%d/%d", topic, seq)), RunningHash: []byte{byte(seq)}}
	switch seq {
	case 4:
		m.ChunkNum, m.ChunkTotal, m.InitialTransactionID = &one, &two, []byte{7, 4}
	case 5:
		m.ChunkNum, m.ChunkTotal, m.InitialTransactionID = &two, &two, []byte{7, 4}
	}
	return m
}

func ledgerRows() *memstore.Store {
	s := memstore.New()
	for seq := int64(1); seq <= 5; seq++ {
		s.AddMessages(message(7, seq))
	}
	s.AddMessages(message(11, 1))
	s.AddTopics(
		model.Topic{ID: 7, HasTopic: true, HasEntity: true, HasCustomFee: true, Memo: "seven"},
		model.Topic{ID: 8, HasTopic: true, HasEntity: true, Memo: "eight"},
		model.Topic{ID: 9, HasTopic: true},
	)
	s.AddEntity("ACCOUNT", model.Topic{ID: 2})
	s.AddTransactions(
		memstore.Transaction{ConsensusTimestamp: base + 7100, Type: memstore.TypeConsensusSubmitMessage, Result: 10, EntityID: 7},
		memstore.Transaction{ConsensusTimestamp: base + 99_000, Type: 14, Result: memstore.ResultSuccess},
	)
	s.AddSchedules(
		model.Schedule{ScheduleID: 2001, CreatorAccountID: 2, PayerAccountID: 2, ConsensusTimestamp: base},
		model.Schedule{ScheduleID: 2002, CreatorAccountID: 3, PayerAccountID: 3, ConsensusTimestamp: base},
		model.Schedule{ScheduleID: 2003, CreatorAccountID: 2, PayerAccountID: 3, ConsensusTimestamp: base, HasEntity: true, Memo: &memo,
			Signatures: []model.Signature{{EntityID: 2003, ConsensusTimestamp: base + 2}, {EntityID: 2003, ConsensusTimestamp: base + 1}}},
	)
	return s
}

func msgs(topic model.EntityID, seqs ...int64) []model.TopicMessage {
	out := make([]model.TopicMessage, len(seqs))
	for i, seq := range seqs {
		out[i] = message(topic, seq)
	}
	return out
}

func ptr(m model.TopicMessage) *model.TopicMessage { return &m }

func cond[T any](op model.Operator, v T) []model.Condition[T] {
	return []model.Condition[T]{{Op: op, Value: v}}
}

// TestLedger asks every question of app.Ledger over the in-memory store
// and compares whole answers: what the core adds (pages, lookahead, the
// REST-only rules) and what it only passes on.
func TestLedger(t *testing.T) {
	t.Parallel()
	ts := func(topic model.EntityID, seq int64) model.Timestamp { return message(topic, seq).ConsensusTimestamp }
	schedule := func(id model.EntityID) model.Schedule {
		s, err := ledgerRows().Schedule(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return *s
	}
	topicRow := func(id model.EntityID) model.Topic {
		tp, err := ledgerRows().Topic(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return *tp
	}
	tests := []struct {
		name string
		ask  func(context.Context, *app.Ledger) (any, error)
		want any
		err  string // "<type>: <message>" of the error wanted
	}{
		{name: "TopicMessages: a full page, asc",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{TopicID: 7, Order: model.Asc, Limit: 2})
			},
			want: app.MessagePage{Rows: msgs(7, 1, 2), Full: true, Next: app.After(model.Asc, ts(7, 2))}},
		{name: "TopicMessages: conditions ANDed, desc, looking ahead",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{Lookahead: true, TopicID: 7,
					SequenceNumber: append(cond(model.OpGte, int64(2)), cond(model.OpNe, int64(4))...),
					Timestamp:      cond(model.OpLte, ts(7, 5)), Order: model.Desc, Limit: 2})
			},
			want: app.MessagePage{Rows: msgs(7, 5, 3), Full: true, More: true, Next: app.After(model.Desc, ts(7, 3))}},
		{name: "TopicMessages: the last page looking ahead has no more",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{Lookahead: true, TopicID: 7,
					Timestamp: cond(model.OpGt, ts(7, 3)), Order: model.Asc, Limit: 2})
			},
			want: app.MessagePage{Rows: msgs(7, 4, 5), Full: true, Next: app.After(model.Asc, ts(7, 5))}},
		{name: "TopicMessages: an empty page of a topic that exists",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{NoSuchTopic: "8", TopicID: 8, Limit: 25})
			},
			want: app.MessagePage{}},
		{name: "TopicMessages: a topic known only by its messages exists",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{NoSuchTopic: "11",
					TopicID: 11, Timestamp: cond(model.OpGt, ts(11, 1)), Limit: 25})
			},
			want: app.MessagePage{}},
		{name: "TopicMessages: no such topic, as the client wrote it",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{NoSuchTopic: "0.12", TopicID: 12, Limit: 25})
			},
			err: "*app.NotFound: No such topic id - 0.12"},
		{name: "TopicMessages: conditions that admit no message, of a topic that exists",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{NoSuchTopic: "7", TopicID: 7, Limit: 25,
					SequenceNumber: append(cond(model.OpGt, int64(3)), cond(model.OpLt, int64(3))...)})
			},
			want: app.MessagePage{Rows: []model.TopicMessage{}}},
		{name: "TopicMessages: conditions that admit no message, of no such topic",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{NoSuchTopic: "0.0.12", TopicID: 12, Limit: 25,
					Timestamp: append(cond(model.OpEq, ts(7, 1)), cond(model.OpNe, ts(7, 1))...)})
			},
			err: "*app.NotFound: No such topic id - 0.0.12"},
		{name: "TopicMessages: no such topic, but GraphQL asks for an empty page",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.TopicMessages(ctx, app.MessageQuery{TopicID: 12, Limit: 25})
			},
			want: app.MessagePage{}},
		{name: "MessageBySequence",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().MessageBySequence(ctx, 7, 3) },
			want: ptr(message(7, 3))},
		{name: "MessageBySequence: none",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().MessageBySequence(ctx, 7, 6) },
			err: "*app.NotFound: Not found"},
		{name: "MessageByTimestamp",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().MessageByTimestamp(ctx, ts(11, 1))
			},
			want: ptr(message(11, 1))},
		{name: "MessageByTimestamp: a failed submit",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().MessageByTimestamp(ctx, base+7100)
			},
			err: "*app.NotFound: Not found"},
		{name: "MessageOfTopicAt",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.MessageOfTopicAt(ctx, 7, ts(7, 2)) },
			want: ptr(message(7, 2))},
		{name: "MessageOfTopicAt: another topic's message",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.MessageOfTopicAt(ctx, 8, ts(7, 2)) },
			err: "*app.NotFound: Not found"},
		{name: "Topic: every row",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().Topic(ctx, 7) },
			want: &model.Topic{ID: 7, HasTopic: true, HasEntity: true, HasCustomFee: true, Memo: "seven"}},
		{name: "Topic: an account has an entity row alone",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().Topic(ctx, 2) },
			want: &model.Topic{ID: 2, HasEntity: true}},
		{name: "Topic: no row",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().Topic(ctx, 12) },
			err: "*app.NotFound: Not found"},
		{name: "TopicEntity",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.TopicEntity(ctx, 8) },
			want: &model.Topic{ID: 8, HasTopic: true, HasEntity: true, Memo: "eight"}},
		{name: "TopicEntity: a topic row without an entity row",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.TopicEntity(ctx, 9) },
			err: "*app.NotFound: Not found"},
		{name: "Topics: the topic entities, looking ahead",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Topics(ctx, app.TopicQuery{Lookahead: true, TopicFilter: app.TopicFilter{Order: model.Asc, Limit: 1}})
			},
			want: app.TopicPage{Rows: []model.Topic{topicRow(7)}, Full: true, More: true, Next: app.After(model.Asc, model.EntityID(7))}},
		{name: "Topics: filtered, desc",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Topics(ctx, app.TopicQuery{Lookahead: true, TopicFilter: app.TopicFilter{ID: cond(model.OpGte, model.EntityID(2)),
					Order: model.Desc, Limit: 5}})
			},
			want: app.TopicPage{Rows: []model.Topic{topicRow(8), topicRow(7)}, Next: app.After(model.Desc, model.EntityID(7))}},
		{name: "TopicsByID: those with an entity row, in id order",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().TopicsByID(ctx, []model.EntityID{9, 8, 12, 7, 8})
			},
			want: []model.Topic{topicRow(7), topicRow(8)}},
		{name: "Schedule: its signatures in consensus order",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().Schedule(ctx, 2003) },
			want: &model.Schedule{ScheduleID: 2003, CreatorAccountID: 2, PayerAccountID: 3, ConsensusTimestamp: base, HasEntity: true, Memo: &memo,
				Signatures: []model.Signature{{EntityID: 2003, ConsensusTimestamp: base + 1}, {EntityID: 2003, ConsensusTimestamp: base + 2}}}},
		{name: "Schedule: none",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().Schedule(ctx, 7) },
			err: "*app.NotFound: Not found"},
		{name: "Schedules: by creator, desc, looking ahead",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Schedules(ctx, app.ScheduleQuery{Lookahead: true, ScheduleFilter: app.ScheduleFilter{
					CreatorAccountID: cond(model.OpEq, creator2), Order: model.Desc, Limit: 1}})
			},
			want: app.SchedulePage{Rows: []model.Schedule{schedule(2003)}, Full: true, More: true, Next: app.After(model.Desc, model.EntityID(2003))}},
		{name: "Schedules: by id, a full page without lookahead",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Schedules(ctx, app.ScheduleQuery{ScheduleFilter: app.ScheduleFilter{
					ScheduleID: cond(model.OpGt, model.EntityID(2001)), Order: model.Asc, Limit: 2}})
			},
			want: app.SchedulePage{Rows: []model.Schedule{schedule(2002), schedule(2003)}, Full: true, Next: app.After(model.Asc, model.EntityID(2003))}},
		{name: "Schedules: an opaque EVM address matches nothing",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Schedules(ctx, app.ScheduleQuery{ScheduleFilter: app.ScheduleFilter{NoMatch: true, Limit: 25}})
			},
			want: app.SchedulePage{}},
		{name: "FollowableTopic",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return nil, l.FollowableTopic(ctx, 8) },
			want: nil},
		{name: "FollowableTopic: an account",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return nil, l.FollowableTopic(ctx, 2) },
			err: "*app.BadRequest: Not a valid topic"},
		{name: "FollowableTopic: no entity",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) { return nil, l.FollowableTopic(ctx, 11) },
			err: "*app.NotFound: 0.0.11 does not exist"},
		{name: "MessagesBySequence: those that exist",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().MessagesBySequence(ctx, []app.TopicSequence{{TopicID: 7, SequenceNumber: 2}, {TopicID: 8, SequenceNumber: 2},
					{TopicID: 11, SequenceNumber: 1}})
			},
			want: map[app.TopicSequence]*model.TopicMessage{{TopicID: 7, SequenceNumber: 2}: ptr(message(7, 2)),
				{TopicID: 11, SequenceNumber: 1}: ptr(message(11, 1))}},
		{name: "MessagesOfTopics: conditions that admit no message",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.MessagesOfTopics(ctx, []model.EntityID{7, 11}, app.MessageQuery{Lookahead: true, Limit: 2,
					SequenceNumber: cond(model.OpLt, int64(math.MinInt64))})
			},
			want: map[model.EntityID]app.MessagePage{7: {}, 11: {}}},
		{name: "MessagesOfTopics: a page for every topic asked",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.MessagesOfTopics(ctx, []model.EntityID{7, 8, 11}, app.MessageQuery{Lookahead: true,
					Order: model.Desc, Limit: 2})
			},
			want: map[model.EntityID]app.MessagePage{
				7:  {Rows: msgs(7, 5, 4), Full: true, More: true, Next: app.After(model.Desc, ts(7, 4))},
				8:  {},
				11: {Rows: msgs(11, 1), Next: app.After(model.Desc, ts(11, 1))},
			}},
		{name: "LatestMessages: of each topic that has one",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().LatestMessages(ctx, []model.EntityID{7, 8, 11})
			},
			want: map[model.EntityID]*model.TopicMessage{7: ptr(message(7, 5)), 11: ptr(message(11, 1))}},
		{name: "ChunksOf: the logical message of a chunk, nil for an unchunked one",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().ChunksOf(ctx, []*model.TopicMessage{ptr(message(7, 5)), ptr(message(7, 1))})
			},
			want: [][]model.TopicMessage{msgs(7, 4, 5), nil}},
		{name: "Activity: counts between consecutive boundaries",
			ask: func(ctx context.Context, l *app.Ledger) (any, error) {
				return l.Store().Activity(ctx, 7, []model.Timestamp{base, ts(7, 2), ts(7, 5), ts(7, 5) + 1, ts(7, 5) + 2})
			},
			want: []int64{1, 3, 1, 0}},
		{name: "SchedulesVersion",
			ask:  func(ctx context.Context, l *app.Ledger) (any, error) { return l.Store().SchedulesVersion(ctx) },
			want: "0"},
	}
	l := app.New(ledgerRows(), app.Rules{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ask(context.Background(), l)
			if gotErr := errorText(err); gotErr != tt.err {
				t.Fatalf("error %q, want %q", gotErr, tt.err)
			}
			if tt.err != "" {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLedgerReadsNoPageItKnowsEmpty: a page whose conditions admit no
// message is answered without asking the store for it, as the query layer
// sent no statement for it; whether its topic exists is still asked.
func TestLedgerReadsNoPageItKnowsEmpty(t *testing.T) {
	t.Parallel()
	s := ledgerRows()
	l := app.New(s, app.Rules{})
	ctx := context.Background()
	none := app.MessageQuery{NoSuchTopic: "7", TopicID: 7, Limit: 25, SequenceNumber: cond(model.OpGt, int64(math.MaxInt64))}
	if _, err := l.TopicMessages(ctx, none); err != nil {
		t.Fatal(err)
	}
	if _, err := l.MessagesOfTopics(ctx, []model.EntityID{7, 8}, none); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"TopicExists": 1}, s.Calls()); diff != "" {
		t.Errorf("questions asked (-want +got):\n%s", diff)
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// TestLedgerPassesOnUnavailable: a store that cannot reach the database
// makes every question answer app.Unavailable, whatever the core does
// around it.
func TestLedgerPassesOnUnavailable(t *testing.T) {
	t.Parallel()
	s := ledgerRows()
	cause := errors.New("connection refused")
	s.Fail(cause)
	l := app.New(s, app.Rules{})
	ctx := context.Background()
	page := app.MessageQuery{NoSuchTopic: "7", TopicID: 7, Limit: 25}
	asks := map[string]func() error{
		"TopicMessages":      func() error { _, err := l.TopicMessages(ctx, page); return err },
		"MessageBySequence":  func() error { _, err := l.Store().MessageBySequence(ctx, 7, 1); return err },
		"MessageByTimestamp": func() error { _, err := l.Store().MessageByTimestamp(ctx, base); return err },
		"MessageOfTopicAt":   func() error { _, err := l.MessageOfTopicAt(ctx, 7, base); return err },
		"Topic":              func() error { _, err := l.Store().Topic(ctx, 7); return err },
		"TopicEntity":        func() error { _, err := l.TopicEntity(ctx, 7); return err },
		"Topics":             func() error { _, err := l.Topics(ctx, app.TopicQuery{}); return err },
		"TopicsByID":         func() error { _, err := l.Store().TopicsByID(ctx, []model.EntityID{7}); return err },
		"Schedule":           func() error { _, err := l.Store().Schedule(ctx, 2001); return err },
		"Schedules":          func() error { _, err := l.Schedules(ctx, app.ScheduleQuery{}); return err },
		"FollowableTopic":    func() error { return l.FollowableTopic(ctx, 7) },
		"MessagesBySequence": func() error {
			_, err := l.Store().MessagesBySequence(ctx, []app.TopicSequence{{TopicID: 7}})
			return err
		},
		"MessagesOfTopics": func() error { _, err := l.MessagesOfTopics(ctx, []model.EntityID{7}, page); return err },
		"LatestMessages":   func() error { _, err := l.Store().LatestMessages(ctx, []model.EntityID{7}); return err },
		"ChunksOf":         func() error { _, err := l.Store().ChunksOf(ctx, []*model.TopicMessage{ptr(message(7, 4))}); return err },
		"Activity":         func() error { _, err := l.Store().Activity(ctx, 7, []model.Timestamp{0, base}); return err },
		"SchedulesVersion": func() error { _, err := l.Store().SchedulesVersion(ctx); return err },
	}
	for name, ask := range asks {
		t.Run(name, func(t *testing.T) {
			var u *app.Unavailable
			if err := ask(); !errors.As(err, &u) || !errors.Is(err, cause) || !u.Outage() {
				t.Errorf("%v, want the store's Unavailable", err)
			}
		})
	}
}

// TestLedgerRules: the rules given to New, their zero sizes defaulted, are
// what every face reads.
func TestLedgerRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give app.Rules
		want app.Rules
	}{
		{"defaults", app.Rules{}, app.Rules{Pages: app.PageSizes{Default: 25, Max: 100}}},
		{"configured", app.Rules{Entities: model.EntityDefaults{Shard: 1, Realm: 2}, Pages: app.PageSizes{Default: 5, Max: 10}},
			app.Rules{Entities: model.EntityDefaults{Shard: 1, Realm: 2}, Pages: app.PageSizes{Default: 5, Max: 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := app.New(memstore.New(), tt.give).Rules(); got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestSchedulesVersionChangesOnReload: the response cache's key changes when
// the schedules' rows are reloaded.
func TestSchedulesVersionChangesOnReload(t *testing.T) {
	t.Parallel()
	s := ledgerRows()
	l := app.New(s, app.Rules{})
	before, _ := l.Store().SchedulesVersion(context.Background())
	s.TruncateSchedules()
	after, _ := l.Store().SchedulesVersion(context.Background())
	if before == after {
		t.Errorf("version %q before and after a reload", before)
	}
}
