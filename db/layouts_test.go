package db_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

// The v2 reads (partition by partition, through each topic's map) must
// answer exactly what the v1 statements answer on the same database: those
// read the parent tables and are right on any layout, only slow. Each test
// builds a v2 database, writes messages spread over its partitions (and
// before and after them), and asks both the same questions.

// v2Fixture is a v2 database with messages, read by v2 and by the v1
// statements (ref).
type v2Fixture struct {
	b        *bun.DB
	v2, ref  *db.DB
	topics   []model.EntityID
	stamps   []model.Timestamp // every message's timestamp
	maxSeq   map[model.EntityID]int64
	rng      *rand.Rand
	lookupOn bool
}

const v2Month = int64(30 * 24 * time.Hour)

// newV2Fixture writes, for a few topics, messages at random times from 2018
// (before the first partition's month) to 2027, some topics dense, some
// sparse, some chunked; the lookup is kept by its trigger.
func newV2Fixture(t *testing.T, seed int64) *v2Fixture {
	t.Helper()
	_, b := testdb.NewLayout(t, testdb.LayoutV2)
	ctx := context.Background()
	f := &v2Fixture{b: b, rng: rand.New(rand.NewSource(seed))}
	f.write(t)
	f.v2, f.ref = db.Wrap(b), db.Wrap(b)
	db.ReadAsV1(f.ref)
	l, err := db.RelearnWith(ctx, f.v2, db.LookupAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !l.MessagesPartitioned || !l.UseLookup {
		t.Fatalf("layout %s: want v2 reading the lookup", l)
	}
	return f
}

// write writes the messages and their transactions.
func (f *v2Fixture) write(t *testing.T) {
	t.Helper()
	ctx, b := context.Background(), f.b
	f.topics, f.stamps, f.maxSeq = nil, nil, map[model.EntityID]int64{}
	start := time.Date(2018, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	end := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i, n := range []int{400, 60, 5, 1, 150} {
		topic := model.EntityID(1000 + i)
		f.topics = append(f.topics, topic)
		var stamps []int64
		for len(stamps) < n {
			stamps = append(stamps, start+f.rng.Int63n(end-start)/1000*1000+int64(i))
		}
		if i == 4 { // a burst inside one month: many messages per partition
			for k := range stamps {
				stamps[k] = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano() + int64(k)*int64(time.Minute) + int64(i)
			}
		}
		sort.Slice(stamps, func(a, b int) bool { return stamps[a] < stamps[b] })
		var nums, totals []string
		for k, ts := range stamps {
			seq := int64(k + 1)
			num, total := "NULL", "NULL"
			if i == 0 && k%10 < 3 { // chunks 1..3 of 3, sharing an initial transaction id
				num, total = fmt.Sprint(k%10+1), "3"
			}
			nums, totals = append(nums, num), append(totals, total)
			f.stamps = append(f.stamps, model.Timestamp(ts))
			f.maxSeq[topic] = seq
		}
		arr := func(vs []string) string { return "{" + strings.Join(vs, ",") + "}" }
		var tss []string
		for _, ts := range stamps {
			tss = append(tss, fmt.Sprint(ts))
		}
		if _, err := b.ExecContext(ctx, "insert into topic_message (consensus_timestamp, message, running_hash, "+
			"sequence_number, running_hash_version, chunk_num, chunk_total, payer_account_id, valid_start_timestamp, "+
			"topic_id, initial_transaction_id) select ts, convert_to('m' || s, 'UTF8'), '\\x01', s, 3, n, c, 2, ts - 1, ?, "+
			"case when n is null then null else int8send(s / 10) end "+
			"from unnest(?::bigint[], ?::int[], ?::int[]) with ordinality as u(ts, n, c, s)",
			int64(topic), arr(tss), arr(nums), arr(totals)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ExecContext(ctx, "insert into transaction (consensus_timestamp, type, result, payer_account_id, "+
			"valid_start_ns, entity_id) select ts, 27, 22, 2, ts - 1, ? from unnest(?::bigint[]) as u(ts)",
			int64(topic), arr(tss)); err != nil {
			t.Fatal(err)
		}
	}
}

// randomQuery is a query of REST's or GraphQL's kinds around the topic's messages.
func (f *v2Fixture) randomQuery(topic model.EntityID) app.MessageQuery {
	type c64 = model.Condition[int64]
	type cts = model.Condition[model.Timestamp]
	r := f.rng
	ops := []model.Operator{model.OpEq, model.OpNe, model.OpGt, model.OpGte, model.OpLt, model.OpLte}
	seqVal := func() int64 { return r.Int63n(f.maxSeq[topic]+3) - 1 }
	tsVal := func() model.Timestamp {
		ts := f.stamps[r.Intn(len(f.stamps))]
		return ts + model.Timestamp(r.Int63n(3)-1)
	}
	mf := app.MessageQuery{TopicID: topic, Limit: []int{1, 2, 25, 100}[r.Intn(4)]}
	if r.Intn(2) == 0 {
		mf.Order = model.Desc
	}
	for n := r.Intn(3); n > 0; n-- {
		mf.SequenceNumber = append(mf.SequenceNumber, c64{Op: ops[r.Intn(len(ops))], Value: seqVal()})
	}
	for n := r.Intn(3); n > 0; n-- {
		mf.Timestamp = append(mf.Timestamp, cts{Op: ops[r.Intn(len(ops))], Value: tsVal()})
	}
	return mf
}

// same asks v2 and the reference every question and compares the answers.
func (f *v2Fixture) same(t *testing.T, rounds int) {
	t.Helper()
	ctx := context.Background()
	all := append([]model.EntityID{999}, f.topics...) // 999 has no message
	for i := 0; i < rounds; i++ {
		topic := all[f.rng.Intn(len(all))]
		q := f.randomQuery(topic)
		if mf, ok := q.Filter(); ok { // the stores are asked for no page that admits no message
			sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessagesOfTopic(ctx, mf) }, "page %+v", q)
		}
		seq := f.rng.Int63n(f.maxSeq[topic]+2) + 0
		gm, gerr := f.v2.MessageBySequence(ctx, topic, seq)
		wm, werr := f.ref.MessageBySequence(ctx, topic, seq)
		if gerr != werr || !cmp.Equal(gm, wm) {
			t.Fatalf("message %d of %s: v2 %v %v, v1 %v %v", seq, topic, gm, gerr, wm, werr)
		}
		ts := f.stamps[f.rng.Intn(len(f.stamps))] + model.Timestamp(f.rng.Int63n(2))
		gm, gerr = f.v2.MessageByTimestamp(ctx, ts)
		wm, werr = f.ref.MessageByTimestamp(ctx, ts)
		if gerr != werr || !cmp.Equal(gm, wm) {
			t.Fatalf("message at %s: v2 %v %v, v1 %v %v", ts, gm, gerr, wm, werr)
		}
	}
	// the batches of the loaders and the coalescers: a statement per
	// partition, pipelined
	var stamps []model.Timestamp
	var keys []app.TopicSequence
	for i := 0; i < 40; i++ {
		stamps = append(stamps, f.stamps[f.rng.Intn(len(f.stamps))]+model.Timestamp(f.rng.Int63n(2)))
		topic := all[f.rng.Intn(len(all))]
		keys = append(keys, app.TopicSequence{TopicID: topic, SequenceNumber: f.rng.Int63n(f.maxSeq[topic] + 2)})
	}
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessagesByTimestamp(ctx, stamps) }, "messages by timestamp")
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessagesBySequence(ctx, keys) }, "messages by sequence number")
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.LatestMessages(ctx, all) }, "latest")
	for _, topic := range all {
		var bounds []model.Timestamp
		for b := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(); b < time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(); b += 7 * v2Month {
			bounds = append(bounds, model.Timestamp(b+f.rng.Int63n(v2Month)))
		}
		sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.Activity(ctx, topic, bounds) }, "activity of %s", topic)
		page, err := f.ref.MessagesOfTopic(ctx, app.MessageFilter{TopicID: topic, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []*model.TopicMessage
		for i := range page {
			msgs = append(msgs, &page[i])
		}
		sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.ChunksOf(ctx, msgs) }, "chunks of %s", topic)
	}
	for _, after := range []model.Timestamp{0, f.stamps[len(f.stamps)/2], f.stamps[len(f.stamps)-1]} {
		sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.LivePoll(ctx, after, all, 50) }, "live poll after %s", after)
	}
}

// sameOnBoth asks read of the v2 handle and of the v1 one and fails unless
// both answer without error and alike; what (with args) names the question.
func sameOnBoth(t *testing.T, f *v2Fixture, read func(*db.DB) (any, error), what string, args ...any) {
	t.Helper()
	got, err := read(f.v2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := read(f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: (-v1 +v2)\n%s", fmt.Sprintf(what, args...), d)
	}
}

func TestV2ReadsEqualV1(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 1)
	f.same(t, 300)
	if n := f.v2.Fallbacks().Count("gap") + f.v2.Fallbacks().Count("span"); n != 0 {
		t.Errorf("%d reads fell back on a lookup kept by the importer", n)
	}
}

func TestV2WithoutLookupEqualsV1(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 2)
	l, err := db.RelearnWith(context.Background(), f.v2, db.LookupOff)
	if err != nil {
		t.Fatal(err)
	}
	if l.UseLookup || !l.MessagesPartitioned {
		t.Fatalf("layout %s: want v2 learning partitions itself", l)
	}
	f.same(t, 300)
}

// TestV2InconsistentLookup: a lookup that lacks a row, lags, or names a
// partition that was detached never costs a message, and the fallbacks are
// counted.
func TestV2InconsistentLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := map[string]string{
		"missing row": "delete from topic_message_lookup where ctid in (select ctid from topic_message_lookup " +
			"where topic_id = 1000 order by sequence_number_range limit 1 offset 3)",
		"lagging range": "update topic_message_lookup set sequence_number_range = int8range(lower(sequence_number_range), " +
			"greatest(lower(sequence_number_range) + 1, upper(sequence_number_range) - 2)), timestamp_range = " +
			"int8range(lower(timestamp_range), lower(timestamp_range) + 1) where topic_id in (1000, 1004)",
		"lagging newest": "update topic_message_lookup l set sequence_number_range = int8range(lower(sequence_number_range), " +
			"lower(sequence_number_range) + 1), timestamp_range = int8range(lower(timestamp_range), lower(timestamp_range) + 1) " +
			"where (topic_id, partition) in (select topic_id, max(partition) from topic_message_lookup group by topic_id)",
		"all gone":  "truncate topic_message_lookup",
		"detached":  "alter table topic_message detach partition topic_message_p2024_03",
		"truncated": "truncate topic_message, transaction, topic_message_lookup",
	}
	for name, stmt := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newV2Fixture(t, int64(len(name)))
			f.same(t, 10) // learn the maps first
			if _, err := f.b.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
			if name == "truncated" {
				// a reset, then other data: the maps learned before must go
				f.write(t)
			} else if _, err := db.RelearnWith(ctx, f.v2, db.LookupOn); err != nil {
				// as after a restart: the maps are learned from the lookup as it is now
				t.Fatal(err)
			}
			f.same(t, 100)
			if name != "truncated" && name != "detached" {
				fb := f.v2.Fallbacks()
				if fb.Count("gap")+fb.Count("span")+fb.Count("tail")+fb.Count("head")+fb.Count("empty") == 0 {
					t.Errorf("no fallback counted")
				}
			}
		})
	}
}

// TestV2LivePollByName: a poll whose watermark and last head are in the
// newest months reads those partitions by name (a prepared statement, not
// planned at every poll) and finds what the v1 statement finds, messages
// written after the first poll included.
func TestV2LivePollByName(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 3)
	ctx := context.Background()
	all := append([]model.EntityID{999}, f.topics...)
	insert := func(ts int64, seq int64) {
		t.Helper()
		if _, err := f.b.ExecContext(ctx, "insert into topic_message (consensus_timestamp, message, running_hash, "+
			"sequence_number, running_hash_version, payer_account_id, valid_start_timestamp, topic_id) "+
			"values (?, '\\x01', '\\x02', ?, 3, 2, ?, 1003)", ts, seq, ts-1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.b.ExecContext(ctx, "insert into transaction (consensus_timestamp, type, result, payer_account_id, "+
			"valid_start_ns, entity_id) values (?, 27, 22, 2, ?, 1003)", ts, ts-1); err != nil {
			t.Fatal(err)
		}
	}
	// Topic 1003 has one message; the fixture's newest are in 2027.
	var newest model.Timestamp
	for _, ts := range f.stamps {
		newest = max(newest, ts)
	}
	insert(int64(newest)+1000, 2)
	rec := &stmtlog.Log{}
	f.v2.Record(rec)
	for round, after := range []model.Timestamp{0, newest, newest, newest + 1000} {
		if round == 2 {
			insert(int64(newest)+2000, 3) // between two polls
		}
		rec.Take()
		gp, err := f.v2.LivePoll(ctx, after, all, 50)
		if err != nil {
			t.Fatal(err)
		}
		sent := rec.Take()
		wp, err := f.ref.LivePoll(ctx, after, all, 50)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wp, gp); d != "" {
			t.Fatalf("poll %d after %s: (-v1 +v2)\n%s", round, after, d)
		}
		if round > 0 {
			if len(sent) != 1 || sent[0].Unprepared || strings.Contains(sent[0].SQL, "FROM transaction ") {
				t.Fatalf("poll %d: want one prepared statement on partitions by name, sent %+v", round, sent)
			}
		}
	}
}

// TestTopicMapBytes: what the service adds to its soft memory limit
// (server.go) grows with the maps the v2 layout keeps and the statements it
// prepares for partitions, and is nothing on v1.
func TestTopicMapBytes(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 11)
	if n := f.v2.TopicMapBytes(); n != 0 {
		t.Errorf("before any read: %d bytes", n)
	}
	f.same(t, 20)
	if n := f.v2.TopicMapBytes(); n <= 0 || n > 1<<20 {
		t.Errorf("after reading %d topics: %d bytes", len(f.topics), n)
	}
	if n, maps := f.v2.KeptBytes(), f.v2.TopicMapBytes(); n <= maps || n > maps+512*16*2000 {
		t.Errorf("kept %d bytes, the maps %d: the statements not counted, or beyond their bound", n, maps)
	}
	if n, k := f.ref.TopicMapBytes(), f.ref.KeptBytes(); n != 0 || k != 0 {
		t.Errorf("read as v1: %d bytes of maps, %d kept", n, k)
	}
}

// TestV2RunAfterReset: a sparse topic's page read as a run of windows
// (runSQL) after a reset that moved its messages to other partitions finds
// out, as a read by name does, that its map is stale, and answers as v1.
func TestV2RunAfterReset(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 21)
	ctx := context.Background()
	page := app.MessageFilter{TopicID: 1001, SequenceNumber: &model.Range{Lo: 1, Hi: math.MaxInt64}, Limit: 25}
	if _, err := f.v2.MessagesOfTopic(ctx, page); err != nil { // learn 1001's map
		t.Fatal(err)
	}
	f.resetMoving(t)
	stale := f.v2.Fallbacks().Count("stale")
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.MessagesOfTopic(ctx, page) }, "after the reset")
	if f.v2.Fallbacks().Count("stale") == stale {
		t.Error("the stale map was not found out")
	}
}

// TestV2ActivityAfterReset: activity after a reset that moved a topic's
// messages to other partitions finds out that the map is stale and counts
// as v1 does.
func TestV2ActivityAfterReset(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 22)
	ctx := context.Background()
	bounds := make([]model.Timestamp, 0, 25)
	from, to := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range int64(25) {
		bounds = append(bounds, model.Timestamp(from+(to-from)/24*i))
	}
	if _, err := f.v2.Activity(ctx, 1001, bounds); err != nil { // learn 1001's map
		t.Fatal(err)
	}
	f.resetMoving(t)
	stale := f.v2.Fallbacks().Count("stale")
	sameOnBoth(t, f, func(d *db.DB) (any, error) { return d.Activity(ctx, 1001, bounds) }, "after the reset")
	if f.v2.Fallbacks().Count("stale") == stale {
		t.Error("the stale map was not found out")
	}
}

// resetMoving is a reset: everything truncated, then topic 1001's messages
// at the times topic 1000's were (400 of them, in other partitions than
// 1001's map names).
func (f *v2Fixture) resetMoving(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	stamps := make([]string, 0, 400)
	for _, ts := range f.stamps[:400] {
		stamps = append(stamps, fmt.Sprint(int64(ts)))
	}
	if _, err := f.b.ExecContext(ctx, "truncate topic_message, transaction, topic_message_lookup"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.ExecContext(ctx, "insert into topic_message (consensus_timestamp, message, running_hash, "+
		"sequence_number, running_hash_version, payer_account_id, valid_start_timestamp, topic_id) "+
		"select ts, convert_to('r' || s, 'UTF8'), '\\x01', s, 3, 2, ts - 1, 1001 "+
		"from unnest(?::bigint[]) with ordinality as u(ts, s)", "{"+strings.Join(stamps, ",")+"}"); err != nil {
		t.Fatal(err)
	}
}
