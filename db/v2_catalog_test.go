package db_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/tools/stmtlog"
)

var namedRE = regexp.MustCompile(`(?:FROM|JOIN) (?:"public"\.)?"?((?:topic_message|transaction)_p\d{4}_\d{2})`)

// constLoRE and constHiRE are the constant bounds of a statement within one
// partition (partition.within).
var (
	constLoRE = regexp.MustCompile(`consensus_timestamp >= (-?\d+)`)
	constHiRE = regexp.MustCompile(`consensus_timestamp < (-?\d+)`)
)

var scanRE = regexp.MustCompile(` on ((topic_message|transaction)_p\d{4}_\d{2})\b`)

// partitionBounds reads the partitions of table: name → [lo, hi).
func partitionBounds(t *testing.T, f *v2Fixture, table string) map[string][2]int64 {
	t.Helper()
	rows, err := f.b.QueryContext(context.Background(), "select c.relname, pg_get_expr(c.relpartbound, c.oid) "+
		"from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	re := regexp.MustCompile(`FROM \((.+)\) TO \((.+)\)`)
	for rows.Next() {
		var name, bound string
		if err := rows.Scan(&name, &bound); err != nil {
			t.Fatal(err)
		}
		m := re.FindStringSubmatch(bound)
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		fmt.Sscanf(strings.Trim(m[1], "'"), "%d", &lo)
		fmt.Sscanf(strings.Trim(m[2], "'"), "%d", &hi)
		out[name] = [2]int64{lo, hi}
	}
	return out
}

// TestV2PartitionsScanned EXPLAINs every statement the v2 reads send, with
// the plan the service gets (the generic plan of a prepared statement, the
// plan for its values of one it plans every time), on a database of 99
// monthly partitions, and counts the partitions each plan really scans:
// never more than its rows can be in. A statement that names a partition
// scans that one; one bounded by times scans the partitions of those times;
// the live poll, those from its watermark on.
func TestV2PartitionsScanned(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 7)
	ctx := context.Background()
	bounds := map[string][2]int64{}
	for _, table := range []string{"topic_message", "transaction"} {
		for k, v := range partitionBounds(t, f, table) {
			bounds[k] = v
		}
	}
	if n := len(bounds); n < 2*48 {
		t.Fatalf("%d partitions, want at least 48 a table", n)
	}
	within := func(lo, hi int64) (n int) {
		for _, b := range bounds {
			if b[0] < hi && lo < b[1] {
				n++
			}
		}
		return n
	}
	for _, mode := range []db.LookupMode{db.LookupOn, db.LookupOff} {
		if _, err := db.RelearnWith(ctx, f.v2, mode); err != nil {
			t.Fatal(err)
		}
		rec := &stmtlog.Log{}
		f.v2.Record(rec)
		f.same(t, 40)
		stmts := rec.Take()
		if len(stmts) == 0 {
			t.Fatal("no statement logged")
		}
		seen := map[string]bool{}
		for _, st := range stmts {
			key := st.SQL
			if !st.Unprepared && seen[key] {
				continue // one generic plan per text
			}
			seen[key] = true
			if !strings.Contains(st.SQL, "topic_message") && !strings.Contains(st.SQL, "transaction") {
				continue
			}
			p := plan(t, f.b, st, seqScansAllowed)
			scanned := map[string]bool{}
			for _, m := range scanRE.FindAllStringSubmatch(p, -1) {
				scanned[m[1]] = true
			}
			allowed := 0
			switch {
			case strings.Contains(st.SQL, "min(sequence_number)"):
				allowed = len(bounds) // learning a topic's map without a lookup: every partition, once per topic
			case len(namedRE.FindAllString(st.SQL, -1)) > 0: // names its partitions: those alone
				named := map[string]bool{}
				for _, m := range namedRE.FindAllStringSubmatch(st.SQL, -1) {
					named[m[1]] = true
				}
				allowed = len(named)
			case strings.Contains(st.SQL, "consensus_timestamp < $"):
				// bounded by its last two arguments
				n := len(st.Args)
				allowed = within(st.Args[n-2].(int64), st.Args[n-1].(int64))
			case constLoRE.MatchString(st.SQL) || constHiRE.MatchString(st.SQL):
				// within one partition's bounds, constants (partition.within)
				lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
				if m := constLoRE.FindStringSubmatch(st.SQL); m != nil {
					lo, _ = strconv.ParseInt(m[1], 10, 64)
				}
				if m := constHiRE.FindStringSubmatch(st.SQL); m != nil {
					hi, _ = strconv.ParseInt(m[1], 10, 64)
				}
				allowed = within(lo, hi)
			case strings.Contains(st.SQL, "WITH tx AS MATERIALIZED"): // the live poll: from the watermark on
				allowed = within(st.Args[0].(int64)+1, math.MaxInt64)
			case strings.Contains(st.SQL, "topic_message_lookup") || strings.Contains(st.SQL, "pg_class"):
				allowed = 0
			default:
				allowed = len(bounds) // the v1 statements' plans are not this test's
				t.Errorf("%s: a statement of unknown shape on the v2 layout:\n%s", mode, st.SQL)
			}
			if len(scanned) > allowed {
				t.Errorf("%s: %d partitions scanned, at most %d may hold its rows:\n%s %v\n%s", mode, len(scanned), allowed, st.SQL, st.Args, p)
			}
		}
	}
}

// citusRules are what a statement must be for Citus to run it on the v2
// distribution (docs/reference/v2-layout.md): topic_message is read for one topic (its
// distribution column equal to a parameter, or to a column of a CTE read
// first), transaction is never joined to topic_message but read in a CTE of
// its own first, and no statement spreads topic ids over unnest.
func citusProblems(sql string) []string {
	var out []string
	readsMessages := regexp.MustCompile(`(FROM|JOIN) ("public"\.)?"?topic_message(_p\d{4}_\d{2})?\b`).MatchString(sql)
	if readsMessages && !regexp.MustCompile(`topic_id = (\$\d+|tx\.topic_id|t\.entity_id)`).MatchString(sql) {
		out = append(out, "reads topic_message without filtering its distribution column topic_id")
	}
	if readsMessages && regexp.MustCompile(`FROM ("public"\.)?"?transaction(_p\d{4}_\d{2})?"?( AS \w+)? (JOIN|,)`).MatchString(sql) {
		out = append(out, "joins transaction (distributed by payer) to topic_message")
	}
	readsTransactions := regexp.MustCompile(`(FROM|JOIN) ("public"\.)?"?transaction(_p\d{4}_\d{2})?\b`).MatchString(sql)
	if readsMessages && readsTransactions && !strings.Contains(sql, "AS MATERIALIZED (SELECT") {
		out = append(out, "reads transaction and topic_message without reading transaction first in a CTE")
	}
	if readsMessages && regexp.MustCompile(`unnest\(\$\d+::bigint\[\](, \$\d+::bigint\[\])*\)( WITH ORDINALITY)? AS k\(`).MatchString(sql) {
		out = append(out, "spreads topic ids over unnest (a multi-shard statement)")
	}
	return out
}

// TestV2StatementsCitusCanRun reads the log of every statement sent on the
// v2 layout of plain PostgreSQL (lookup on and off) and fails on one that
// breaks citusRules but the two the Citus server sends otherwise
// (citusServer); the v1 batches, which break them, are the rules' own
// check. TestCitusPlans holds the statements to a real Citus cluster.
func TestV2StatementsCitusCanRun(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 8)
	ctx := context.Background()
	// Without Citus, a batch of several topics' lookups in one partition
	// (unnest) and a lookup by timestamp that joins transaction are allowed:
	// on Citus they are single-topic statements and reads table by table.
	check := func(name string, d *db.DB, want bool) {
		rec := &stmtlog.Log{}
		d.Record(rec)
		f.same(t, 30)
		_, _ = d.MessagesBySequence(ctx, []app.TopicSequence{{TopicID: 1000, SequenceNumber: 3}, {TopicID: 1001, SequenceNumber: 2},
			{TopicID: 1004, SequenceNumber: 3}, {TopicID: 1004, SequenceNumber: 4}})
		_, _ = d.MessagesOfTopics(ctx, f.topics, app.MessageFilter{Limit: 5})
		bad := 0
		for _, st := range rec.Take() {
			p := citusProblems(st.SQL)
			if want && slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "unnest") }) {
				continue // a batch of topics, which Citus's server sends topic by topic
			}
			if want && slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "joins transaction") }) {
				continue // a lookup by timestamp, which Citus's server reads table by table
			}
			if len(p) > 0 {
				bad++
				if want {
					t.Errorf("%s: %s:\n%s", name, strings.Join(p, "; "), st.SQL)
				}
			}
		}
		if !want && bad == 0 {
			t.Errorf("%s: the rules found nothing wrong in the v1 batch statements", name)
		}
	}
	for _, mode := range []db.LookupMode{db.LookupOn, db.LookupOff} {
		if _, err := db.RelearnWith(ctx, f.v2, mode); err != nil {
			t.Fatal(err)
		}
		check(string(mode), f.v2, true)
	}
	check("v1 statements", f.ref, false)
}

// TestLearnLayoutKeepsCatalog: the layout's refresh keeps an unchanged
// catalog, and the topic maps learned on it, and reads a changed one anew.
func TestLearnLayoutKeepsCatalog(t *testing.T) {
	t.Parallel()
	f := newV2Fixture(t, 5)
	ctx := context.Background()
	before := db.Catalog(f.v2)
	if _, err := f.v2.LearnLayout(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if db.Catalog(f.v2) != before {
		t.Fatal("an unchanged catalog was read anew: every topic's map would be learned again at each refresh")
	}
	if _, err := f.b.ExecContext(ctx, "truncate topic_message_p2024_03"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v2.LearnLayout(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if db.Catalog(f.v2) == before {
		t.Fatal("a truncated partition left the catalog as it was")
	}
}
