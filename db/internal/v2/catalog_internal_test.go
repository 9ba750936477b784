package v2

import (
	"math"
	"testing"
)

func TestParsePartition(t *testing.T) {
	cases := []struct {
		name, bound string
		lo, hi      int64
		ok          bool
	}{
		{"month", "FOR VALUES FROM ('1567296000000000000') TO ('1569888000000000000')", 1567296000000000000, 1569888000000000000, true},
		{"first", "FOR VALUES FROM (MINVALUE) TO ('1569888000000000000')", math.MinInt64, 1569888000000000000, true},
		{"last", "FOR VALUES FROM ('1569888000000000000') TO (MAXVALUE)", 1569888000000000000, math.MaxInt64, true},
		{"unquoted", "FOR VALUES FROM (5) TO (10)", 5, 10, true},
		{"default partition", "DEFAULT", 0, 0, false},
		{"list partition", "FOR VALUES IN ('1', '2')", 0, 0, false},
		{"two columns", "FOR VALUES FROM ('1', '2') TO ('3', '4')", 0, 0, false},
		{"empty", "FOR VALUES FROM ('10') TO ('10')", 0, 0, false},
		{"not a number", "FOR VALUES FROM ('x') TO ('10')", 0, 0, false},
		{"overflow", "FOR VALUES FROM ('99999999999999999999') TO ('1')", 0, 0, false},
		{"nothing", "", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := parsePartition(`"public"."p"`, "p", c.bound, 7)
			if ok != c.ok || (ok && (p.lo != c.lo || p.hi != c.hi || p.filenode != 7)) {
				t.Errorf("parsePartition(%q) = %+v, %t; want [%d, %d), %t", c.bound, p, ok, c.lo, c.hi, c.ok)
			}
		})
	}
}

// FuzzParsePartition: any bound text is read or refused, never a panic,
// and what is read is a non-empty range.
func FuzzParsePartition(f *testing.F) {
	for _, s := range []string{"FOR VALUES FROM ('1') TO ('2')", "FOR VALUES FROM (MINVALUE) TO (MAXVALUE)", "DEFAULT", "FOR VALUES FROM (') TO (')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, bound string) {
		if p, ok := parsePartition("x", "x", bound, 0); ok && p.lo >= p.hi {
			t.Fatalf("%q: empty range [%d, %d)", bound, p.lo, p.hi)
		}
	})
}

// TestAtOutsidePartitions: a time no partition of the catalog holds (no
// catalog at all, as with a DEFAULT partition, or a month without one) is
// read from the parent table with no bounds, so that the statements within
// it (the lookup by timestamp) read the whole table, as v1's do.
func TestAtOutsidePartitions(t *testing.T) {
	month := partition{name: `"public"."p"`, lo: 100, hi: 200}
	for name, s := range map[string]partitionSet{"no catalog": {}, "outside the months": {parts: []partition{month}}} {
		for _, ts := range []int64{0, 50, 250} {
			p := s.at(ts)
			if p.name != "" || p.within("c") != "" {
				t.Errorf("%s: at(%d) = %+v, within %q; want the parent, unbounded", name, ts, p, p.within("c"))
			}
		}
	}
	if p := (&partitionSet{parts: []partition{month}}).at(150); p.name != month.name || p.within("c") != " AND c >= 100 AND c < 200" {
		t.Errorf("at(150) = %+v: want the month, within its bounds", p)
	}
}
