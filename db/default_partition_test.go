package db_test

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
)

// TestV2DefaultPartitionEqualsV1: on a v2 database whose tables have a
// DEFAULT partition (read through the parent tables), every read answers as
// the v1 statements do, and the messages by timestamp, in the DEFAULT
// partition and in the monthly ones, are found.
func TestV2DefaultPartitionEqualsV1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// monthly partitions from 2009-01 to a year ahead, and DEFAULT ones
	_, b := testdb.NewLayout(t, "v2-default")
	f := &v2Fixture{b: b, rng: rand.New(rand.NewSource(31))}
	f.write(t) // 2018 to 2027-06, in the monthly partitions
	// one more topic: before every partition, in one, after every one
	topic := model.EntityID(1005)
	var stamps []int64
	for _, d := range []time.Time{
		time.Date(2008, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2008, 6, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC),
	} {
		stamps = append(stamps, d.UnixNano()+5)
	}
	for k, ts := range stamps {
		if _, err := b.ExecContext(ctx, "insert into topic_message (consensus_timestamp, message, running_hash, "+
			"sequence_number, running_hash_version, payer_account_id, valid_start_timestamp, topic_id) "+
			"values (?, '\\x01', '\\x02', ?, 3, 2, ?, ?)", ts, k+1, ts-1, int64(topic)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ExecContext(ctx, "insert into transaction (consensus_timestamp, type, result, payer_account_id, "+
			"valid_start_ns, entity_id) values (?, 27, 22, 2, ?, ?)", ts, ts-1, int64(topic)); err != nil {
			t.Fatal(err)
		}
		f.stamps = append(f.stamps, model.Timestamp(ts))
	}
	f.topics = append(f.topics, topic)
	f.maxSeq[topic] = int64(len(stamps))
	var inDefault int
	if err := b.NewRaw("select count(*) from topic_message_default").Scan(ctx, &inDefault); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d messages in the DEFAULT partition", inDefault, len(f.stamps))
	if inDefault != 4 {
		t.Fatalf("%d messages in the DEFAULT partition, want topic 1005's four of 2008 and 2030", inDefault)
	}

	f.v2, f.ref = db.Wrap(b), db.Wrap(b)
	db.ReadAsV1(f.ref)
	l, err := db.RelearnWith(ctx, f.v2, db.LookupAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !l.MessagesPartitioned || !l.TransactionsPartitioned {
		t.Fatalf("layout %s: want v2", l)
	}

	// every message by its timestamp, alone and in one batch
	for _, ts := range f.stamps {
		m, err := f.v2.MessageByTimestamp(ctx, ts)
		if err != nil || m == nil || m.ConsensusTimestamp != ts {
			t.Fatalf("message at %s: %v, %v", ts, m, err)
		}
	}
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessagesByTimestamp(ctx, f.stamps) }, "every message by timestamp")
	got, err := f.v2.MessagesByTimestamp(ctx, f.stamps)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(f.stamps) {
		t.Fatalf("%d of %d messages found by timestamp in one batch", len(got), len(f.stamps))
	}
	// and every other read, on both sides
	f.same(t, 200)

	// Each message by its timestamp answers as on v1, in the DEFAULT
	// partition and in the monthly ones: the faces' by-timestamp routes
	// read nothing else that depends on the layout (tests/variants_test.go
	// holds every route to v1's answers on this variant).
	for _, ts := range f.stamps {
		sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessageByTimestamp(ctx, ts) }, "the message at %s", ts)
	}
}
