package db_test

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/fixture"
	"mirrorql/tools/stmtlog"
)

// TestLivePoll: the live poll returns the messages of the given topics whose
// successful submit transaction (type 27, result 22) is after the
// watermark, in consensus order, each as the message routes read it; its
// Scanned mark is the newest such transaction walked past (even one without
// a message row), its Head the newest transaction of any kind; Full says the
// limit, counted in submit transactions with or without a message row,
// stopped the walk; the watermark math.MaxInt64 reads the head alone. With
// prepared statements and over the simple protocol (MIRRORQL_DB_PREPARE=false).
func TestLivePoll(t *testing.T) {
	t.Parallel()
	// Its rows lie in 1970 and some have no payer, which v1's tables hold and the
	// importer's v2 schema refuses (closed monthly partitions, payer
	// NOT NULL): a v1 test, in both of make test's runs. The v2 reads are held
	// to v1's on rows v2 holds (layouts_test.go, tests/variants_test.go).
	url, b := testdb.NewLayout(t, testdb.LayoutV1)
	ctx := context.Background()
	// Topic 7: 1…5 at 1010…1050; topic 8: 1…3 at 1015, 1025, 1035, and a
	// successful submit at 1070 whose message row is missing; topic 9: one
	// message at 1012 (never asked for). Noise that must not show: a failed
	// submit of topic 7 at 1060 (with a message row, seq 6), a transfer at
	// 1065 with entity 7 and a message row (seq 7), and the newest
	// transaction of the ledger, a transfer at 2000.
	_, err := b.DB.ExecContext(ctx, `
		INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash,
			running_hash_version, chunk_num, chunk_total, payer_account_id, valid_start_timestamp, initial_transaction_id)
		VALUES
			(7, 1, 1010, '\x01', '\xaa', 3, NULL, NULL, 98, 1000, NULL),
			(7, 2, 1020, '\x02', '\xab', NULL, 1, 2, NULL, NULL, '\x0102'),
			(7, 3, 1030, '\x03', '\xac', 2, 2, 2, 98, 1001, '\x0102'),
			(7, 4, 1040, '\x04', '\xad', 3, NULL, NULL, 98, 1002, NULL),
			(7, 5, 1050, '\x05', '\xae', 3, NULL, NULL, 98, 1003, NULL),
			(8, 1, 1015, '\x11', '\xba', 3, NULL, NULL, 99, 1004, NULL),
			(8, 2, 1025, '\x12', '\xbb', 3, NULL, NULL, 99, 1005, NULL),
			(8, 3, 1035, '\x13', '\xbc', 3, NULL, NULL, 99, 1006, NULL),
			(9, 1, 1012, '\x21', '\xca', 3, NULL, NULL, 99, 1007, NULL),
			(7, 6, 1060, '\x06', '\xaf', 3, NULL, NULL, 98, 1008, NULL),
			(7, 7, 1065, '\x07', '\xa0', 3, NULL, NULL, 98, 1009, NULL);
		INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		VALUES (1010, 27, 22, 98, 1, 7), (1020, 27, 22, 98, 1, 7), (1030, 27, 22, 98, 1, 7),
			(1040, 27, 22, 98, 1, 7), (1050, 27, 22, 98, 1, 7),
			(1015, 27, 22, 99, 1, 8), (1025, 27, 22, 99, 1, 8), (1035, 27, 22, 99, 1, 8), (1070, 27, 22, 99, 1, 8),
			(1012, 27, 22, 99, 1, 9),
			(1060, 27, 150, 98, 1, 7), (1065, 14, 22, 98, 1, 7), (2000, 14, 22, 98, 1, NULL)`)
	if err != nil {
		t.Fatal(err)
	}
	viaSimple := openPool(t, db.Options{URL: url, PoolSize: 2})
	viaPgx := openPool(t, db.Options{URL: url, PoolSize: 2, Prepare: true})

	topics := func(ids ...model.EntityID) []model.EntityID { return ids }
	cases := []struct {
		name     string
		after    model.Timestamp
		topics   []model.EntityID
		limit    int
		want     []model.Timestamp // the messages' consensus timestamps, in order
		scanned  model.Timestamp
		head     model.Timestamp
		wantFull bool
	}{
		{"everything", 0, topics(7, 8), 100, []model.Timestamp{1010, 1015, 1020, 1025, 1030, 1035, 1040, 1050}, 1070, 2000, false},
		{"one topic", 0, topics(8), 100, []model.Timestamp{1015, 1025, 1035}, 1070, 2000, false},
		{"other topic", 0, topics(9), 100, []model.Timestamp{1012}, 1012, 2000, false},
		{"after the watermark only", 1020, topics(7, 8), 100, []model.Timestamp{1025, 1030, 1035, 1040, 1050}, 1070, 2000, false},
		{"watermark between", 1029, topics(7), 100, []model.Timestamp{1030, 1040, 1050}, 1050, 2000, false},
		{"at the limit", 0, topics(7, 8), 3, []model.Timestamp{1010, 1015, 1020}, 1020, 2000, true},
		{"limit exactly met", 1020, topics(7), 3, []model.Timestamp{1030, 1040, 1050}, 1050, 2000, true},
		{"a submit without its message", 1050, topics(7, 8), 100, nil, 1070, 2000, false},
		{"the limit met by a submit without its message", 1050, topics(7, 8), 1, nil, 1070, 2000, true},
		{"the limit met by a submit without its message, one message", 1040, topics(7, 8), 2, []model.Timestamp{1050}, 1070, 2000, true},
		{"nothing new", 1070, topics(7, 8), 100, nil, 0, 2000, false},
		{"unknown topic", 0, topics(4242), 100, nil, 0, 2000, false},
		{"no topic", 0, nil, 100, nil, 0, 2000, false},
		{"the head alone", math.MaxInt64, topics(7, 8), 100, nil, 0, 2000, false},
		{"the head alone, limit 1", math.MaxInt64, topics(7, 8), 1, nil, 0, 2000, false},
	}
	for drv, d := range map[string]*db.DB{"prepared": viaPgx, "simple protocol": viaSimple} {
		for _, tc := range cases {
			p, err := d.LivePoll(ctx, tc.after, tc.topics, tc.limit)
			if err != nil {
				t.Fatalf("%s %s: %v", drv, tc.name, err)
			}
			var got []model.Timestamp
			for _, m := range p.Messages {
				got = append(got, m.ConsensusTimestamp)
			}
			if !cmp.Equal(got, tc.want) || p.Scanned != tc.scanned || p.Head != tc.head || p.Full != tc.wantFull {
				t.Errorf("%s %s: messages %v scanned %d head %d full %v; want %v scanned %d head %d full %v",
					drv, tc.name, got, p.Scanned, p.Head, p.Full, tc.want, tc.scanned, tc.head, tc.wantFull)
			}
			// Each message is the row the message routes read, nullable
			// columns and all.
			for _, m := range p.Messages {
				page, err := d.MessagesOfTopic(ctx, filterOf(t, app.MessageQuery{TopicID: m.TopicID, Order: model.Asc, Limit: 2,
					Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpEq, Value: m.ConsensusTimestamp}}}))
				if err != nil {
					t.Fatal(err)
				}
				if len(page) != 1 || !cmp.Equal(page[0], m) {
					t.Errorf("%s %s: polled %+v, the route reads %+v", drv, tc.name, m, page)
				}
			}
		}
	}

	// An empty ledger: no head, nothing walked.
	_, empty := testdb.New(t)
	p, err := db.Wrap(empty).LivePoll(ctx, 0, topics(7), 10)
	if err != nil || p.Head != 0 || p.Scanned != 0 || len(p.Messages) != 0 || p.Full {
		t.Errorf("empty ledger: %+v, %v", p, err)
	}
}

// TestLivePollPlans: on a large table (200,000 messages of 20 topics with
// their submit transactions, and as many transfers between them), the
// generic plans of the statements a live subscription costs — the shared
// poll for 1 and for 100 topics, a history page by consensus time, a gap
// fill by sequence number — use the indexes: no sequential scan of
// topic_message or transaction, sequential scans allowed (the plan is the
// planner's choice, not forced).
//
// On the v1 layout in both of make test's runs: its index names
// (transaction_pkey) and plan shapes are v1's, and its 200,000-row INSERT
// would upsert v2's lookup row per message in one transaction, which grows
// quadratically (every upsert walks the row's versions so far).
func TestLivePollPlans(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads 600,000 rows")
	}
	_, b := testdb.NewLayout(t, testdb.LayoutV1)
	ctx := context.Background()
	const base = int64(1_700_000_000_000_000_000)
	start := time.Now()
	_, err := b.DB.ExecContext(ctx, `
		INSERT INTO topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version,
			payer_account_id, valid_start_timestamp, topic_id)
		SELECT $1::bigint + g * 1000, '\x0102030405060708', '\xabababababababababababababab', g / 20 + 1, 3, 1002,
			$1::bigint + g * 1000 - 5, 3001 + g % 20
		FROM generate_series(0, 199999) g`, base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.DB.ExecContext(ctx, `
		INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		SELECT $1::bigint + g * 1000, 27, 22, 1002, $1::bigint + g * 1000 - 5, 3001 + g % 20 FROM generate_series(0, 199999) g
		UNION ALL
		SELECT $1::bigint + g * 1000 + 500, 14, 22, 1002, $1::bigint + g * 1000, NULL FROM generate_series(0, 199999) g`, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.ExecContext(ctx, "ANALYZE topic_message; ANALYZE transaction"); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %s", time.Since(start).Round(time.Millisecond))

	rec := &stmtlog.Log{}
	d := db.Wrap(b)
	d.Record(rec)
	many := make([]model.EntityID, 100)
	for i := range many {
		many[i] = model.EntityID(3001 + i) // 20 with messages, 80 without
	}
	recent := model.Timestamp(base + 199_900*1000) // the last 100 messages are new
	calls := []struct {
		name  string
		call  func() error
		index []string // an index the plan must use
	}{
		{"live poll, 1 topic", func() error {
			p, err := d.LivePoll(ctx, recent, many[:1], 5000)
			if err == nil && len(p.Messages) != 4 {
				t.Errorf("live poll, 1 topic: %d messages, want 4", len(p.Messages))
			}
			return err
		}, []string{"topic_message__topic_id_timestamp", "transaction"}},
		{"live poll, 100 topics", func() error {
			p, err := d.LivePoll(ctx, recent, many, 5000)
			if err == nil && len(p.Messages) != 99 {
				t.Errorf("live poll, 100 topics: %d messages, want 99", len(p.Messages))
			}
			return err
		}, []string{"topic_message__topic_id_timestamp", "transaction"}},
		{"live poll, the head alone", func() error {
			_, err := d.LivePoll(ctx, math.MaxInt64, many, 5000)
			return err
		}, []string{"transaction_pkey"}},
		{"history page", func() error {
			_, err := d.MessagesOfTopic(ctx, filterOf(t, app.MessageQuery{TopicID: 3007, Order: model.Asc, Limit: 1000,
				Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpGte, Value: model.Timestamp(base + 5_000_000)},
					{Op: model.OpLt, Value: model.Timestamp(base + 90_000_000)}}}))
			return err
		}, []string{"topic_message__topic_id_timestamp"}},
		{"history page after the last sent", func() error {
			_, err := d.MessagesOfTopic(ctx, filterOf(t, app.MessageQuery{TopicID: 3007, Order: model.Asc, Limit: 1000,
				Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpGt, Value: model.Timestamp(base + 5_000_000)}}}))
			return err
		}, []string{"topic_message__topic_id_timestamp"}},
		{"gap fill", func() error {
			_, err := d.MessagesOfTopic(ctx, filterOf(t, app.MessageQuery{TopicID: 3007, Order: model.Asc, Limit: 1000,
				SequenceNumber: []model.Condition[int64]{{Op: model.OpGt, Value: 4000}, {Op: model.OpLt, Value: 4010}}}))
			return err
		}, []string{"topic_message__topic_id_seqnum"}},
	}
	seqScan := regexp.MustCompile(`Seq Scan on (topic_message|transaction)\b`)
	for _, c := range calls {
		rec.Take()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		stmts := rec.Take()
		if len(stmts) != 1 {
			t.Fatalf("%s: %d statements, want 1", c.name, len(stmts))
		}
		if stmts[0].Unprepared {
			t.Fatalf("%s: %s is not prepared", c.name, stmts[0].SQL)
		}
		p := plan(t, b, stmts[0], seqScansAllowed)
		if seqScan.MatchString(p) {
			t.Errorf("%s: sequential scan in the generic plan of\n%s %v\n%s", c.name, stmts[0].SQL, stmts[0].Args, p)
		}
		for _, ix := range c.index {
			if !strings.Contains(p, "Index Scan using "+ix) && !strings.Contains(p, "Index Only Scan using "+ix) &&
				!strings.Contains(p, "Index Scan Backward using "+ix) && !strings.Contains(p, "Index Only Scan Backward using "+ix) &&
				!(ix == "transaction" && strings.Contains(p, "using transaction__type_consensus_timestamp on transaction")) {
				t.Errorf("%s: the generic plan does not use %s:\n%s", c.name, ix, p)
			}
		}
		if strings.HasPrefix(c.name, "live poll") {
			// The poll does not read the transaction table but by its
			// (type, consensus_timestamp) index and its primary key.
			for _, line := range strings.Split(p, "\n") {
				if strings.Contains(line, " on transaction") && !strings.Contains(line, "using transaction__type_consensus_timestamp on transaction") &&
					!strings.Contains(line, "using transaction_pkey on transaction") {
					t.Errorf("%s: transaction read otherwise than by its indexes: %s\n%s", c.name, strings.TrimSpace(line), p)
				}
			}
		}
		t.Logf("%s:\n%s", c.name, p)
	}
}

// TestV2LivePollPlans is TestLivePollPlans on the v2 layout, messages in the
// current month: the poll by the partitions' names (prepared, its generic
// plan) and the first poll, planned for its values over the parents, probe
// topic_message's (topic_id, consensus_timestamp) index of each partition
// once per submit transaction, and scan no partition sequentially.
func TestV2LivePollPlans(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads 600,000 rows")
	}
	_, b := testdb.NewLayout(t, testdb.LayoutV2)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).UnixNano()
	// The lookup's trigger would upsert one row 200,000 times in one
	// transaction: off for the load, the lookup written after it.
	_, err := b.DB.ExecContext(ctx, `
		ALTER TABLE topic_message DISABLE TRIGGER topic_message_lookup_kept;
		INSERT INTO topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version,
			payer_account_id, valid_start_timestamp, topic_id)
		SELECT $1::bigint + g * 1000, '\x0102030405060708', '\xabababababababababababababab', g / 20 + 1, 3, 1002,
			$1::bigint + g * 1000 - 5, 3001 + g % 20
		FROM generate_series(0, 199999) g;
		ALTER TABLE topic_message ENABLE TRIGGER topic_message_lookup_kept;
		INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		SELECT $1::bigint + g * 1000, 27, 22, 1002, $1::bigint + g * 1000 - 5, 3001 + g % 20 FROM generate_series(0, 199999) g
		UNION ALL
		SELECT $1::bigint + g * 1000 + 500, 14, 22, 1002, $1::bigint + g * 1000, NULL FROM generate_series(0, 199999) g`, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.RebuildLookup(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.ExecContext(ctx, "ANALYZE topic_message; ANALYZE transaction"); err != nil {
		t.Fatal(err)
	}
	d := db.Wrap(b)
	if l, err := d.LearnLayout(ctx, nil); err != nil || !l.MessagesPartitioned {
		t.Fatalf("layout %s, %v: want v2", l, err)
	}
	rec := &stmtlog.Log{}
	d.Record(rec)
	many := make([]model.EntityID, 100)
	for i := range many {
		many[i] = model.EntityID(3001 + i) // 20 with messages, 80 without
	}
	recent := model.Timestamp(base + 199_900*1000) // the last 100 messages are new
	// The messages' partition is scanned by its index alone; the empty
	// months around it are scanned as the planner likes (nothing to read).
	month := time.Unix(0, base).UTC().Format("_p2006_01")
	seqScan := regexp.MustCompile(`Seq Scan on (topic_message|transaction)(` + month + `)?\b`)
	probe := regexp.MustCompile(`Index (Only )?Scan using topic_message` + month + `_topic_id_consensus_timestamp_idx`)
	for _, c := range []struct {
		name       string
		topics     []model.EntityID
		want       int
		unprepared bool
	}{
		// the first poll, which learns the head, is planned for its values
		{"first poll, 1 topic", many[:1], 4, true},
		{"by name, 1 topic", many[:1], 4, false},
		{"by name, 100 topics", many, 99, false},
	} {
		rec.Take()
		p, err := d.LivePoll(ctx, recent, c.topics, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) != c.want {
			t.Errorf("%s: %d messages, want %d", c.name, len(p.Messages), c.want)
		}
		stmts := rec.Take()
		if len(stmts) != 1 || stmts[0].Unprepared != c.unprepared {
			t.Fatalf("%s: sent %+v", c.name, stmts)
		}
		pl := plan(t, b, stmts[0], seqScansAllowed)
		if seqScan.MatchString(pl) || !probe.MatchString(pl) {
			t.Errorf("%s: a sequential scan, or no probe of the (topic_id, consensus_timestamp) index:\n%s %v\n%s",
				c.name, stmts[0].SQL, stmts[0].Args, pl)
		}
		t.Logf("%s:\n%s", c.name, pl)
	}
}
