package db_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
)

// TestMessagesOfTopicFilters: pages of random filters — any mix of
// operators on sequence numbers and timestamps, both orders, any limit —
// hold exactly the messages that a direct evaluation of the conditions
// picks, in order, prepared and over the simple protocol, both the generic and the
// planned-each-time statements, and the GraphQL face's batch gives the
// same pages.
func TestMessagesOfTopicFilters(t *testing.T) {
	t.Parallel()
	// Its rows lie in 1970 and some have no payer, which v1's tables hold and the
	// importer's v2 schema refuses (closed monthly partitions, payer
	// NOT NULL): a v1 test, in both of make test's runs. The v2 reads are held
	// to v1's on rows v2 holds (layouts_test.go, tests/variants_test.go).
	url, b := testdb.NewLayout(t, testdb.LayoutV1)
	ctx := context.Background()
	// Topic 7: sequence numbers 1…60 at timestamps 1000+10·n, NULLable
	// columns alternating; topic 8 is noise the filter must not leak.
	_, err := b.DB.ExecContext(ctx, `
		INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash,
			running_hash_version, chunk_num, chunk_total, payer_account_id, valid_start_timestamp, initial_transaction_id)
		SELECT t, s, 1000 + 10 * s + t, '\x01', '\x02',
			CASE WHEN s % 2 = 0 THEN 3 END, CASE WHEN s % 3 = 0 THEN 1 END, CASE WHEN s % 3 = 0 THEN 2 END,
			CASE WHEN s % 4 = 0 THEN 98 END, CASE WHEN s % 4 = 0 THEN 5 END, CASE WHEN s % 5 = 0 THEN '\xaa'::bytea END
		FROM generate_series(1, 60) s, (VALUES (7), (8)) AS k(t) WHERE t = 7 OR s % 2 = 1`)
	if err != nil {
		t.Fatal(err)
	}
	type msg struct{ seq, ts int64 }
	var all []msg
	for s := int64(1); s <= 60; s++ {
		all = append(all, msg{s, 1000 + 10*s + 7})
	}
	viaSimple := openPool(t, db.Options{URL: url, PoolSize: 2})
	drivers := map[string]*db.DB{"prepared": db.Wrap(b), "simple protocol": viaSimple}
	ops := []model.Operator{model.OpEq, model.OpNe, model.OpLt, model.OpLte, model.OpGt, model.OpGte}
	r := rand.New(rand.NewPCG(5, 1))
	value := func(lo, hi int64) int64 {
		switch r.IntN(12) {
		case 0:
			return math.MaxInt64
		case 1:
			return math.MinInt64
		}
		return lo + r.Int64N(hi-lo+1)
	}
	for i := 0; i < 400; i++ {
		q := app.MessageQuery{TopicID: 7, Order: model.Asc, Limit: 1 + r.IntN(30)}
		if r.IntN(2) == 0 {
			q.Order = model.Desc
		}
		for n := r.IntN(3); n > 0; n-- {
			q.SequenceNumber = append(q.SequenceNumber, model.Condition[int64]{Op: ops[r.IntN(len(ops))], Value: value(-2, 63)})
		}
		for n := r.IntN(3); n > 0; n-- {
			q.Timestamp = append(q.Timestamp, model.Condition[model.Timestamp]{
				Op: ops[r.IntN(len(ops))], Value: model.Timestamp(value(990, 1620))})
		}
		var want []msg
		for _, m := range all {
			ok := true
			for _, c := range q.SequenceNumber {
				ok = ok && holds(c.Op, m.seq, c.Value)
			}
			for _, c := range q.Timestamp {
				ok = ok && holds(c.Op, m.ts, int64(c.Value))
			}
			if ok {
				want = append(want, m)
			}
		}
		if q.Order == model.Desc {
			slices.Reverse(want)
		}
		want = want[:min(len(want), q.Limit)]
		f, ok := q.Filter()
		if !ok { // the ledger asks no store for it
			if len(want) > 0 {
				t.Fatalf("%+v admits no message, but %v", q, want)
			}
			continue
		}
		driver := []string{"prepared", "simple protocol"}[i%2]
		d := drivers[driver]
		got, err := d.MessagesOfTopic(ctx, f)
		if err != nil {
			t.Fatalf("%s %+v: %v", driver, q, err)
		}
		// with a topic that has no messages, so that the array's statement
		// answers (one topic alone is asked with MessagesOfTopic's)
		batch, err := d.MessagesOfTopics(ctx, []model.EntityID{7, 70_000}, f)
		if err != nil {
			t.Fatalf("%s %+v: batch: %v", driver, q, err)
		}
		var gotMsgs, batchMsgs []msg
		for _, m := range got {
			gotMsgs = append(gotMsgs, msg{m.SequenceNumber, int64(m.ConsensusTimestamp)})
			if m.TopicID != 7 || (m.SequenceNumber%2 == 0) != (m.RunningHashVersion != nil) ||
				(m.SequenceNumber%3 == 0) != (m.ChunkNum != nil && m.ChunkTotal != nil && *m.ChunkTotal == 2) ||
				(m.SequenceNumber%4 == 0) != (m.PayerAccountID != nil && *m.PayerAccountID == 98 && *m.ValidStartTimestamp == 5) ||
				(m.SequenceNumber%5 == 0) != (m.InitialTransactionID != nil) {
				t.Fatalf("message %d read wrongly: %+v", m.SequenceNumber, m)
			}
		}
		for _, m := range batch[7] {
			batchMsgs = append(batchMsgs, msg{m.SequenceNumber, int64(m.ConsensusTimestamp)})
		}
		if !slices.Equal(gotMsgs, want) || !slices.Equal(batchMsgs, want) {
			t.Fatalf("%s, query %+v:\n got   %v\n batch %v\n want  %v", driver, q, gotMsgs, batchMsgs, want)
		}
	}
}

func holds(op model.Operator, v, bound int64) bool {
	switch op {
	case model.OpEq:
		return v == bound
	case model.OpNe:
		return v != bound
	case model.OpLt:
		return v < bound
	case model.OpLte:
		return v <= bound
	case model.OpGt:
		return v > bound
	}
	return v >= bound
}
