package testdb

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// catalogDir holds the importer's catalog listings and the query that
// printed them (tests/testdata/upstream-catalog/README.md).
const catalogDir = "../testdata/upstream-catalog/"

// describeSQL is the query of describe.sh, which prints the listings.
func describeSQL(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(catalogDir + "describe.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<<'SQL'\n")
	query, _, ok2 := strings.Cut(rest, "\nSQL\n")
	if !ok || !ok2 {
		t.Fatalf("describe.sh: no <<'SQL' … SQL block")
	}
	return query
}

// columnNumber is the column's number in describe.sh's lines, which the
// listings leave out (v2's columns are created in another order).
var columnNumber = regexp.MustCompile(`^(\S+ \| 1 column) \d+ `)

// notNullConstraint is a line of a NOT NULL constraint, which PostgreSQL 18
// keeps in pg_constraint.
var notNullConstraint = regexp.MustCompile(`^\S+ \| 2 constraint \S+ \| n \| NOT NULL `)

// describe lists the catalog of the database at url as describe.sh does
// (psql -At -F ' | '), sorted.
func describe(t *testing.T, layout string) []string {
	t.Helper()
	_, b := NewLayout(t, layout)
	rows, err := b.QueryContext(context.Background(), describeSQL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var f [5]string
		if err := rows.Scan(&f[0], &f[1], &f[2], &f[3], &f[4]); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, columnNumber.ReplaceAllString(strings.Join(f[:], " | "), "$1 "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// listing reads a listing, sorted.
func listing(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(catalogDir + name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// TestFixtureIsUpstreamSchema: the tables the tests, the demo and the
// benchmarks build are the importer's own, column for column (type, domain
// or enum, nullability, default), key and index for index, partition key,
// partitions closed and monthly: db.Migrate's as V1's chain makes them,
// fixture.CreateV2's as v2's does. Whatever the layout a test asks for.
func TestFixtureIsUpstreamSchema(t *testing.T) {
	// Where a listing may differ: PostgreSQL 18 lists each NOT NULL as a
	// constraint too (the listings were made on 15; the columns' lines say
	// it already); v1's transaction autovacuum options (tuning
	// the importer adds later); the v2 partitions' count and first month,
	// which follow the partitionStartDate the database was built with; and
	// the trigger that keeps v2's lookup, which the importer keeps from its
	// own code instead (V2Options.KeepLookup).
	partitions := regexp.MustCompile(`^(\S+ \| 4 partitions) \| \d+ \| \S+_p\d{4}_\d\d \.\. (\S+_p)\d{4}_\d\d \| FOR VALUES FROM \('\d+'\) TO \('\d+'\)$`)
	aside := map[string]func(string) string{
		LayoutV1: func(line string) string {
			if strings.HasPrefix(line, "transaction | 0 relation |") {
				return "transaction | 0 relation | r | not partitioned | (options aside)"
			}
			return line
		},
		LayoutV2: func(line string) string {
			return partitions.ReplaceAllString(line, "$1 | (count) | (first) .. ${2}YYYY_MM | FOR VALUES FROM (monthly)")
		},
	}
	for _, layout := range []string{LayoutV1, LayoutV2} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			norm := func(lines []string) []string {
				var out []string
				for _, l := range lines {
					if !strings.HasPrefix(l, "topic_message | 5 trigger topic_message_lookup_kept |") && !notNullConstraint.MatchString(l) {
						out = append(out, aside[layout](l))
					}
				}
				return out
			}
			want, got := norm(listing(t, layout+".txt")), norm(describe(t, layout))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the %s fixture is not the importer's schema (-importer +fixture):\n%s", layout, d)
			}
			if layout == LayoutV2 {
				checkMonthly(t)
			}
		})
	}
}

// checkMonthly: every partition of the v2 fixture is one calendar month,
// closed at both ends (no MINVALUE, MAXVALUE or DEFAULT), named for it, and
// they follow one another without a gap.
func checkMonthly(t *testing.T) {
	t.Helper()
	_, b := NewLayout(t, LayoutV2)
	rows, err := b.QueryContext(context.Background(), `select p.relname::text, pg_get_expr(p.relpartbound, p.oid)
		from pg_inherits i join pg_class p on p.oid = i.inhrelid
		where i.inhparent in ('topic_message'::regclass, 'transaction'::regclass)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	bound := regexp.MustCompile(`^FOR VALUES FROM \('(\d+)'\) TO \('(\d+)'\)$`)
	months := map[string][]time.Time{}
	for rows.Next() {
		var name, expr string
		if err := rows.Scan(&name, &expr); err != nil {
			t.Fatal(err)
		}
		m := bound.FindStringSubmatch(expr)
		if m == nil {
			t.Errorf("%s: %s, want closed bounds", name, expr)
			continue
		}
		lo, _ := strconv.ParseInt(m[1], 10, 64)
		hi, _ := strconv.ParseInt(m[2], 10, 64)
		from := time.Unix(0, lo).UTC()
		table, _, _ := strings.Cut(name, "_p")
		if from.Day() != 1 || from.Hour() != 0 || !from.AddDate(0, 1, 0).Equal(time.Unix(0, hi).UTC()) ||
			name != table+from.Format("_p2006_01") {
			t.Errorf("%s: %s, want the month it is named for", name, expr)
		}
		months[table] = append(months[table], from)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for table, ms := range months {
		slices.SortFunc(ms, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(ms); i++ {
			if !ms[i-1].AddDate(0, 1, 0).Equal(ms[i]) {
				t.Errorf("%s: no partition between %s and %s", table, ms[i-1].Format("2006-01"), ms[i].Format("2006-01"))
			}
		}
	}
	if len(months) != 2 {
		t.Errorf("partitions of %d tables, want topic_message's and transaction's", len(months))
	}
}
