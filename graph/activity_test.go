package graph_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"mirrorql/graph"
	"mirrorql/model"
	"mirrorql/tests/testdb"
)

// TestActivityEqualsCount: Topic.activity, messageCount and latestMessage
// against count(*), max() on random data — an empty topic, a topic whose
// history in the database starts at sequence number 1, and one that holds
// only a later part of it — for random intervals, among them intervals
// before the first message, after the last, and boundaries exactly on a
// message; activity costs one statement whatever its buckets.
func TestActivityEqualsCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", graph.Options{})
	ctx := context.Background()
	seed := uint64(20261123)
	if s := os.Getenv("MIRRORQL_TEST_ACTIVITY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (MIRRORQL_TEST_ACTIVITY_SEED)", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))

	// topic 901: none; 902: 1..N; 903: 5000..5000+N (a later part only)
	var stamps []int64
	for _, topic := range []int64{901, 902, 903} {
		if _, err := e.bun.ExecContext(ctx, `INSERT INTO entity (id, num, realm, shard, type, timestamp_range)
			VALUES (?, ?, 0, 0, 'TOPIC', int8range(1, null))`, topic, topic); err != nil {
			t.Fatal(err)
		}
		if topic == 901 {
			continue
		}
		first := int64(1)
		if topic == 903 {
			first = 5000
		}
		ts := int64(1_700_000_000_000_000_000)
		for i := int64(0); i < 300; i++ {
			ts += rnd.Int64N(3_000_000_000) // some messages in the same nanosecond range, gaps of up to 3 s
			if rnd.IntN(10) == 0 {
				ts++ // adjacent
			}
			stamps = append(stamps, ts)
			if _, err := e.bun.ExecContext(ctx, `INSERT INTO topic_message (consensus_timestamp, message, running_hash,
				sequence_number, topic_id, payer_account_id) VALUES (?, '\x00', '\x00', ?, ?, 98)`, ts, first+i, topic); err != nil {
				t.Fatal(err)
			}
			ts++
		}
	}
	if _, err := e.bun.ExecContext(ctx, "ANALYZE topic_message"); err != nil {
		t.Fatal(err)
	}
	pick := func() int64 {
		switch rnd.IntN(4) {
		case 0:
			return stamps[rnd.IntN(len(stamps))] // exactly on a message
		case 1:
			return 1_600_000_000_000_000_000 + rnd.Int64N(1e18) // anywhere, before and after all
		default:
			return stamps[0] + rnd.Int64N(stamps[len(stamps)-1]-stamps[0]+1e9)
		}
	}
	for round := 0; round < 60; round++ {
		topic := []int64{901, 902, 903}[rnd.IntN(3)]
		from, to := pick(), pick()
		if from == to {
			to++
		}
		if from > to {
			from, to = to, from
		}
		buckets := 1 + rnd.IntN(120)
		before := e.stmts.Len()
		r := e.do(t, fmt.Sprintf(`{ topic(id: "0.0.%d") { messageCount latestMessage { sequenceNumber }
			activity(from: "%s", to: "%s", buckets: %d) { from to messages } } }`,
			topic, model.Timestamp(from), model.Timestamp(to), buckets), nil)
		if len(r.Errors) > 0 {
			t.Fatalf("errors %+v", r.Errors)
		}
		// the topic, its latest message, the activity; on v2, each by
		// the partitions they need (db's tests count those)
		if n := e.stmts.Len() - before; n != 3 && testdb.Layout() == testdb.LayoutV1 {
			t.Errorf("%d statements, want 3", n)
		}
		tp := r.Data.(map[string]any)["topic"].(map[string]any)
		var maxSeq int64
		if err := e.bun.NewRaw("SELECT coalesce(max(sequence_number), 0) FROM topic_message WHERE topic_id = ?", topic).Scan(ctx, &maxSeq); err != nil {
			t.Fatal(err)
		}
		if got := int64(tp["messageCount"].(float64)); got != maxSeq {
			t.Errorf("topic %d messageCount %d, want %d", topic, got, maxSeq)
		}
		if lm, _ := tp["latestMessage"].(map[string]any); (lm == nil) != (maxSeq == 0) || lm != nil && int64(lm["sequenceNumber"].(float64)) != maxSeq {
			t.Errorf("topic %d latestMessage %v, want %d", topic, lm, maxSeq)
		}
		got := tp["activity"].([]any)
		if len(got) != buckets {
			t.Fatalf("%d buckets, want %d", len(got), buckets)
		}
		for i, b := range got {
			bucket := b.(map[string]any)
			lo, _ := model.ParseTimestamp(bucket["from"].(string))
			hi, _ := model.ParseTimestamp(bucket["to"].(string))
			if i == 0 && int64(lo) != from || i == buckets-1 && int64(hi) != to {
				t.Fatalf("bucket %d [%s, %s) of [%d, %d)", i, bucket["from"], bucket["to"], from, to)
			}
			var want int64
			if err := e.bun.NewRaw(`SELECT count(*) FROM topic_message WHERE topic_id = ? AND consensus_timestamp >= ?
				AND consensus_timestamp < ?`, topic, int64(lo), int64(hi)).Scan(ctx, &want); err != nil {
				t.Fatal(err)
			}
			if got := int64(bucket["messages"].(float64)); got != want {
				t.Fatalf("round %d topic %d bucket %d [%d, %d): %d messages, count(*) %d", round, topic, i, lo, hi, got, want)
			}
		}
	}
}

func TestActivityArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	cases := []struct{ args, message string }{
		{`from: "1", to: "2", buckets: 0`, "Invalid parameter: buckets"},
		{`from: "1", to: "2", buckets: -3`, "Invalid parameter: buckets"},
		{`from: "x", to: "2", buckets: 1`, "Invalid parameter: from"},
		{`from: "1", to: "2.x", buckets: 1`, "Invalid parameter: to"},
		{`from: "2", to: "2", buckets: 1`, "`to` must be after `from`"},
	}
	for _, tc := range cases {
		r := e.do(t, `{ topic(id: "0.0.7") { activity(`+tc.args+`) { messages } } }`, nil)
		if len(r.Errors) != 1 || r.Errors[0].Message != tc.message {
			t.Errorf("%s: %+v, want %q", tc.args, r.Errors, tc.message)
		}
	}
}
