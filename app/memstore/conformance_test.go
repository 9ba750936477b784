package memstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The rows both stores hold: topics 0.0.7 (every row), 0.0.8 (no custom
// fee), 0.0.9 (a topic row alone), messages of 0.0.7 (chunks in both forms)
// and of 0.0.11 (no row at all), account 0.0.98, a failed submit and the
// ledger's head, and schedules with and without entity rows and signatures.
const t0 = model.Timestamp(1_300_000_000_000000000) // inside the v2 fixture's months

var (
	payer              = model.EntityID(98)
	chunk1, chunk2, c3 = int32(1), int32(2), int32(3)
	hashVersion        = int16(3)
	validStart         = t0 - 10
	memoS              = "pending"
	deleted            = true
	sigType            = int16(3)
)

func messageRows() []model.TopicMessage {
	var out []model.TopicMessage
	for seq := int64(1); seq <= 30; seq++ {
		m := model.TopicMessage{TopicID: 7, SequenceNumber: seq, ConsensusTimestamp: t0 + model.Timestamp(seq*10),
			Message: []byte{byte(seq)}, RunningHash: []byte{1, byte(seq)}, RunningHashVersion: &hashVersion, PayerAccountID: &payer}
		switch seq {
		case 5, 6, 7: // a logical message in three chunks (protobuf form)
			m.ChunkNum, m.ChunkTotal = []*int32{&chunk1, &chunk2, &c3}[seq-5], &c3
			m.InitialTransactionID = []byte{7, 5}
		case 20, 22: // a legacy two-chunk message (payer and valid start), a message between
			m.ChunkNum, m.ChunkTotal = []*int32{&chunk1, &chunk2}[(seq-20)/2], &chunk2
			m.ValidStartTimestamp = &validStart
		}
		out = append(out, m)
	}
	for seq := int64(1); seq <= 3; seq++ {
		out = append(out, model.TopicMessage{TopicID: 11, SequenceNumber: seq, ConsensusTimestamp: t0 + model.Timestamp(seq*10+5),
			Message: []byte("x"), RunningHash: []byte{2}, PayerAccountID: &payer})
	}
	return out
}

var (
	otherTransactions = []memstore.Transaction{
		{ConsensusTimestamp: t0 + 1000, Type: memstore.TypeConsensusSubmitMessage, Result: 10, EntityID: 7}, // failed
		{ConsensusTimestamp: t0 + 5000, Type: 14, Result: memstore.ResultSuccess, EntityID: payer},          // the head
	}
	one = model.Timestamp(1)
	// the rows' ranges and custom fees as the statements read them back
	topicRows = []model.Topic{
		{ID: 7, HasTopic: true, HasEntity: true, HasCustomFee: true, Memo: "seven", TimestampFrom: &one, CustomFeeFrom: &one},
		{ID: 8, HasTopic: true, HasEntity: true, Memo: "eight", TimestampFrom: &one},
		{ID: 9, HasTopic: true},
	}
	scheduleRows = []model.Schedule{
		{ScheduleID: 2001, ConsensusTimestamp: t0, CreatorAccountID: 98, PayerAccountID: 98, TransactionBody: []byte{1}},
		{ScheduleID: 2002, ConsensusTimestamp: t0 + 1, CreatorAccountID: 99, PayerAccountID: 98, TransactionBody: []byte{2},
			HasEntity: true, Deleted: &deleted, Key: []byte{1, 1}, Memo: new(string)},
		{ScheduleID: 2003, ConsensusTimestamp: t0 + 2, CreatorAccountID: 98, PayerAccountID: 99, TransactionBody: []byte{3},
			WaitForExpiry: true, HasEntity: true, Deleted: new(bool), Memo: &memoS,
			Signatures: []model.Signature{
				{EntityID: 2003, ConsensusTimestamp: t0 + 9, PublicKeyPrefix: []byte{9}, Signature: []byte{9, 9}, Type: &sigType},
				{EntityID: 2003, ConsensusTimestamp: t0 + 4, PublicKeyPrefix: []byte{4}, Signature: []byte{4, 4}},
			}},
	}
)

// fill puts the rows into s and into PostgreSQL, the latter as the
// importer's tables hold them.
func fill(t *testing.T, s *memstore.Store, b *bun.DB) {
	t.Helper()
	ctx := context.Background()
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := b.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	tx := func(x memstore.Transaction) {
		exec("INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id) VALUES (?, ?, ?, ?, ?, ?)",
			int64(x.ConsensusTimestamp), x.Type, x.Result, int64(payer), int64(x.ConsensusTimestamp)-1, int64(x.EntityID))
	}
	for _, m := range messageRows() {
		exec("INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash, running_hash_version, "+
			"chunk_num, chunk_total, payer_account_id, valid_start_timestamp, initial_transaction_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			int64(m.TopicID), m.SequenceNumber, int64(m.ConsensusTimestamp), m.Message, m.RunningHash, m.RunningHashVersion,
			m.ChunkNum, m.ChunkTotal, (*int64)(m.PayerAccountID), (*int64)(m.ValidStartTimestamp), m.InitialTransactionID)
		tx(memstore.Transaction{ConsensusTimestamp: m.ConsensusTimestamp, Type: memstore.TypeConsensusSubmitMessage,
			Result: memstore.ResultSuccess, EntityID: m.TopicID})
		s.AddMessages(m)
	}
	for _, x := range otherTransactions {
		tx(x)
	}
	s.AddTransactions(otherTransactions...)
	entity := func(id model.EntityID, kind, memo string, deleted *bool, key []byte) {
		exec("INSERT INTO entity (id, num, realm, shard, type, memo, deleted, key, timestamp_range) VALUES (?, ?, 0, 0, ?, ?, ?, ?, '[1,)')",
			int64(id), int64(id), kind, memo, deleted, key)
	}
	for _, tp := range topicRows {
		if tp.HasEntity {
			entity(tp.ID, "TOPIC", tp.Memo, nil, nil)
		}
		if tp.HasTopic {
			exec("INSERT INTO topic (id, timestamp_range) VALUES (?, '[1,)')", int64(tp.ID))
		}
		if tp.HasCustomFee {
			exec("INSERT INTO custom_fee (entity_id, fixed_fees, timestamp_range) VALUES (?, '[]', '[1,)')", int64(tp.ID))
		}
	}
	s.AddTopics(topicRows...)
	entity(payer, "ACCOUNT", "", nil, nil)
	s.AddEntity("ACCOUNT", model.Topic{ID: payer, TimestampFrom: &one})
	for _, sc := range scheduleRows {
		exec("INSERT INTO schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, transaction_body, wait_for_expiry) "+
			"VALUES (?, ?, ?, ?, ?, ?)", int64(sc.ScheduleID), int64(sc.ConsensusTimestamp), int64(sc.CreatorAccountID),
			int64(sc.PayerAccountID), sc.TransactionBody, sc.WaitForExpiry)
		if sc.HasEntity {
			entity(sc.ScheduleID, "SCHEDULE", *sc.Memo, sc.Deleted, sc.Key)
			s.AddEntity("SCHEDULE", model.Topic{ID: sc.ScheduleID, Memo: *sc.Memo, Deleted: sc.Deleted, TimestampFrom: &one})
		}
		for _, g := range sc.Signatures {
			exec("INSERT INTO transaction_signature (entity_id, consensus_timestamp, public_key_prefix, signature, type) VALUES (?, ?, ?, ?, ?)",
				int64(g.EntityID), int64(g.ConsensusTimestamp), g.PublicKeyPrefix, g.Signature, g.Type)
		}
	}
	s.AddSchedules(scheduleRows...)
}

// question is one Store question with its arguments.
type question struct {
	name string
	ask  func(context.Context, app.Store) (any, error)
}

// TestAgreesWithDB: the in-memory store answers as the query layer does on
// the same rows (on the layout MIRRORQL_TEST_LAYOUT names), for every
// question and many filters, so the core's tests over it stand for the
// service's behaviour.
func TestAgreesWithDB(t *testing.T) {
	t.Parallel()
	// Its rows span the years: every month's partitions on v2.
	_, b := testdb.NewLayout(t, testdb.Layout())
	mem := memstore.New()
	fill(t, mem, b)
	ctx := context.Background()
	d := db.Wrap(b)
	if _, err := d.LearnLayout(ctx, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("layout: %v", err)
	}
	var questions []question
	add := func(name string, ask func(context.Context, app.Store) (any, error)) {
		questions = append(questions, question{name, ask})
	}
	ids := []model.EntityID{2, 7, 8, 9, 11, 12, 98, 2001, 2002, 2003}
	for _, id := range ids {
		add(fmt.Sprint("Topic ", id), func(ctx context.Context, s app.Store) (any, error) { return s.Topic(ctx, id) })
		add(fmt.Sprint("TopicExists ", id), func(ctx context.Context, s app.Store) (any, error) { return s.TopicExists(ctx, id) })
		add(fmt.Sprint("EntityKind ", id), func(ctx context.Context, s app.Store) (any, error) { return s.EntityKind(ctx, id) })
		add(fmt.Sprint("Schedule ", id), func(ctx context.Context, s app.Store) (any, error) { return s.Schedule(ctx, id) })
		// one id: the details route's statement (db.TopicsByID)
		add(fmt.Sprint("TopicsByID ", id), func(ctx context.Context, s app.Store) (any, error) {
			return s.TopicsByID(ctx, []model.EntityID{id})
		})
	}
	add("TopicsByID", func(ctx context.Context, s app.Store) (any, error) { return s.TopicsByID(ctx, ids) })
	for seq := int64(0); seq <= 31; seq++ {
		add(fmt.Sprint("MessageBySequence ", seq), func(ctx context.Context, s app.Store) (any, error) {
			return s.MessageBySequence(ctx, 7, seq)
		})
	}
	for ts := t0; ts <= t0+400; ts += 5 {
		add(fmt.Sprint("MessageByTimestamp ", ts), func(ctx context.Context, s app.Store) (any, error) {
			return s.MessageByTimestamp(ctx, ts)
		})
	}
	add("MessageByTimestamp of a failed submit", func(ctx context.Context, s app.Store) (any, error) {
		return s.MessageByTimestamp(ctx, t0+1000)
	})
	var keys []app.TopicSequence
	for _, topic := range []model.EntityID{7, 8, 11} {
		for seq := int64(0); seq <= 4; seq++ {
			keys = append(keys, app.TopicSequence{TopicID: topic, SequenceNumber: seq})
		}
	}
	add("MessagesBySequence", func(ctx context.Context, s app.Store) (any, error) { return s.MessagesBySequence(ctx, keys) })
	add("LatestMessages", func(ctx context.Context, s app.Store) (any, error) {
		return s.LatestMessages(ctx, []model.EntityID{7, 8, 11, 12})
	})
	all := messageRows()
	var chunked []*model.TopicMessage
	for i := range all {
		chunked = append(chunked, &all[i])
	}
	add("ChunksOf", func(ctx context.Context, s app.Store) (any, error) { return s.ChunksOf(ctx, chunked) })
	add("Activity", func(ctx context.Context, s app.Store) (any, error) {
		return s.Activity(ctx, 7, []model.Timestamp{t0 - 100, t0, t0 + 15, t0 + 100, t0 + 101, t0 + 300, t0 + 400})
	})
	for _, after := range []model.Timestamp{0, t0 + 50, t0 + 295, t0 + 5000, math.MaxInt64} {
		for _, limit := range []int{1, 5, 100} {
			add(fmt.Sprint("LivePoll ", after, " ", limit), func(ctx context.Context, s app.Store) (any, error) {
				return s.LivePoll(ctx, after, []model.EntityID{7, 11}, limit)
			})
		}
	}
	r := rand.New(rand.NewPCG(32, 4))
	for i := range 200 {
		q := app.MessageQuery{TopicID: []model.EntityID{7, 11, 12}[r.IntN(3)], Order: []model.Order{model.Asc, model.Desc}[r.IntN(2)],
			Limit: 1 + r.IntN(40)}
		for range r.IntN(3) {
			q.SequenceNumber = append(q.SequenceNumber, model.Condition[int64]{Op: randomOp(r), Value: r.Int64N(34)})
		}
		for range r.IntN(3) {
			q.Timestamp = append(q.Timestamp, model.Condition[model.Timestamp]{Op: randomOp(r), Value: t0 + model.Timestamp(r.Int64N(330))})
		}
		// A store is asked only for a filter that admits some message.
		if f, ok := q.Filter(); ok {
			add(fmt.Sprintf("MessagesOfTopic %d %+v", i, q), func(ctx context.Context, s app.Store) (any, error) {
				return s.MessagesOfTopic(ctx, f)
			})
			add(fmt.Sprintf("MessagesOfTopics %d %+v", i, q), func(ctx context.Context, s app.Store) (any, error) {
				return s.MessagesOfTopics(ctx, []model.EntityID{7, 8, 11}, f)
			})
		}
		ids := func() []model.Condition[model.EntityID] {
			var c []model.Condition[model.EntityID]
			for range r.IntN(3) {
				c = append(c, model.Condition[model.EntityID]{Op: randomOp(r), Value: 2000 + model.EntityID(r.Int64N(5))})
			}
			return c
		}
		sf := app.ScheduleFilter{ScheduleID: ids(), CreatorAccountID: nil, Order: q.Order, Limit: 1 + r.IntN(4), NoMatch: r.IntN(10) == 0}
		if r.IntN(2) == 0 {
			sf.CreatorAccountID = []model.Condition[model.EntityID]{{Op: randomOp(r), Value: 98}}
		}
		add(fmt.Sprintf("Schedules %d %+v", i, sf), func(ctx context.Context, s app.Store) (any, error) { return s.Schedules(ctx, sf) })
		tf := app.TopicFilter{Order: q.Order, Limit: 1 + r.IntN(3)}
		for range r.IntN(3) {
			tf.ID = append(tf.ID, model.Condition[model.EntityID]{Op: randomOp(r), Value: 6 + model.EntityID(r.Int64N(4))})
		}
		add(fmt.Sprintf("Topics %d %+v", i, tf), func(ctx context.Context, s app.Store) (any, error) { return s.Topics(ctx, tf) })
	}
	for _, q := range questions {
		want, wantErr := q.ask(ctx, d)
		got, gotErr := q.ask(ctx, mem)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: error %v, the query layer's %v", q.name, gotErr, wantErr)
			continue
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: (-query layer +memstore):\n%s", q.name, diff)
		}
	}
}

func randomOp(r *rand.Rand) model.Operator {
	ops := []model.Operator{model.OpEq, model.OpNe, model.OpLt, model.OpLte, model.OpGt, model.OpGte}
	return ops[r.IntN(len(ops))]
}
