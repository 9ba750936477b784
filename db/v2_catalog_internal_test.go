package db

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

// months are n partitions of width 10 from 0, the first from MINVALUE and
// the last to MAXVALUE.
func months(n int) []partition {
	var out []partition
	for i := 0; i < n; i++ {
		p := partition{name: "p", lo: int64(i) * 10, hi: int64(i+1) * 10}
		if i == 0 {
			p.lo = math.MinInt64
		}
		if i == n-1 {
			p.hi = math.MaxInt64
		}
		out = append(out, p)
	}
	return out
}

// TestWindows covers consensus time: every partition that may hold a
// message of the topic is in exactly one window, in order.
func TestWindows(t *testing.T) {
	parts := months(10)
	for i := 7; i < 10; i++ {
		parts[i].empty = true // the future: never written
	}
	p := &v2Reader{messages: partitionSet{parts: parts}, server: postgresServer{}}
	seg := func(part int, seqLo, seqHi int64) segment {
		lo := parts[part].lo
		if part == 0 {
			lo = -5
		}
		return segment{part: part, seqLo: seqLo, seqHi: seqHi, tsLo: lo + 1, tsHi: lo + 3}
	}
	type win struct {
		part         int32
		why          why
		seqLo, seqHi int64
	}
	cases := []struct {
		name   string
		m      topicMap
		now    int64
		want   []win
		wantTo int64
	}{
		{"lookup, contiguous", topicMap{lookup: true, learned: 65, segs: []segment{seg(1, 1, 5), seg(3, 5, 9)}}, 65,
			[]win{{1, whyNone, math.MinInt64, 5}, {3, whyNone, 5, math.MaxInt64}, {6, whyNone, 9, math.MaxInt64}}, 70},
		{"lookup, missing row between", topicMap{lookup: true, learned: 65, segs: []segment{seg(1, 1, 5), seg(4, 9, 12)}}, 65,
			[]win{{1, whyNone, math.MinInt64, 9}, {-1, whyGap, 5, 9}, {4, whyNone, 5, math.MaxInt64}, {6, whyNone, 12, math.MaxInt64}}, 70},
		{"lookup, not from 1", topicMap{lookup: true, learned: 65, segs: []segment{seg(2, 4, 5)}}, 65,
			[]win{{-1, whyHead, math.MinInt64, 4}, {2, whyNone, math.MinInt64, math.MaxInt64}, {6, whyNone, 5, math.MaxInt64}}, 70},
		{"lookup, nothing", topicMap{lookup: true, learned: 65}, 65,
			[]win{{-1, whyEmpty, math.MinInt64, math.MaxInt64}}, math.MaxInt64},
		{"learned, gaps are known empty", topicMap{learned: 65, segs: []segment{seg(1, 1, 5), seg(4, 9, 12)}}, 65,
			[]win{{1, whyNone, math.MinInt64, 9}, {4, whyNone, 5, math.MaxInt64}, {6, whyNone, 12, math.MaxInt64}}, 70},
		{"learned, nothing: the tail alone", topicMap{learned: 65}, 65,
			[]win{{6, whyNone, math.MinInt64, math.MaxInt64}}, 70},
		{"a later partition becomes current", topicMap{learned: 65}, 75,
			[]win{{6, whyNone, math.MinInt64, math.MaxInt64}, {7, whyNone, math.MinInt64, math.MaxInt64}}, 80},
		{"segment in the tail", topicMap{lookup: true, learned: 65, segs: []segment{seg(1, 1, 5), seg(6, 5, 9)}}, 65,
			[]win{{1, whyNone, math.MinInt64, 5}, {6, whyNone, 5, math.MaxInt64}}, 70},
		{"detached partition's segment", topicMap{lookup: true, learned: 65, segs: []segment{{part: -1, seqLo: 1, seqHi: 5}, seg(2, 5, 9)}}, 65,
			[]win{{-1, whyHead, math.MinInt64, 5}, {2, whyNone, math.MinInt64, math.MaxInt64}, {6, whyNone, 9, math.MaxInt64}}, 70},
	}
	for i := range cases {
		c := &cases[i]
		t.Run(c.name, func(t *testing.T) {
			c.m.learned += commitLag // the tail starts at 65: partition 6
			ws, until := c.m.windows(p, c.now)
			var got []win
			for _, w := range ws {
				got = append(got, win{w.part, w.why, w.seqLo, w.seqHi})
			}
			if len(got) != len(c.want) {
				t.Fatalf("windows %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("window %d: %+v, want %+v (all: %+v)", i, got[i], c.want[i], got)
				}
			}
			if until != c.wantTo {
				t.Errorf("until %d, want %d", until, c.wantTo)
			}
			for i := 1; i < len(ws); i++ {
				if ws[i].lo < ws[i-1].hi {
					t.Errorf("windows %d and %d overlap: %+v %+v", i-1, i, ws[i-1], ws[i])
				}
			}
		})
	}
}

// TestRunBlockOf: a run's block holds every partition of the run, starts at
// a multiple of runBlockStep, and is no block at all when the run is wider.
func TestRunBlockOf(t *testing.T) {
	parts := make([]partition, 50)
	for i := range parts {
		parts[i] = partition{lo: int64(i) * 10, hi: int64(i+1) * 10}
	}
	parts[0].lo = math.MinInt64
	for _, c := range []struct {
		first, last int
		lo, hi      int64
	}{
		{0, 0, math.MinInt64, 240},
		{3, 16, math.MinInt64, 240},
		{7, 23, math.MinInt64, 240},
		{7, 24, math.MinInt64, math.MaxInt64}, // wider than the block that starts below it
		{8, 24, 80, 320},
		{15, 31, 80, 320},
		{40, 49, 400, 500}, // the last block is cut at the last partition
		{45, 49, 400, 500},
	} {
		b := runBlockOf(parts, c.first, c.last)
		if b.lo != c.lo || b.hi != c.hi {
			t.Errorf("partitions %d–%d: block [%d, %d), want [%d, %d)", c.first, c.last, b.lo, b.hi, c.lo, c.hi)
		}
	}
}

// TestRunOf: a run joins the next windows while they hold fewer rows than
// the page needs (and the one after), ends at a window the map cannot
// vouch for, at maxRun windows, and where its partitions would leave the
// block its statement is planned for (runBlockOf).
func TestRunOf(t *testing.T) {
	ws := func(rows int32, parts ...int32) []window {
		out := make([]window, len(parts))
		for i, p := range parts {
			out[i] = window{part: p, rows: rows}
		}
		return out
	}
	many := make([]int32, 30)
	for i := range many {
		many[i] = int32(i)
	}
	for _, c := range []struct {
		name      string
		todo      []window
		remaining int64
		want      int
	}{
		{"one window fills the page", ws(100, 3, 4, 5), 25, 1},
		{"small windows, and the one that fills the page", ws(10, 3, 4, 5, 6), 25, 3},
		{"a window alone", ws(10, 3), 25, 1},
		{"at most maxRun windows", ws(1, many...), 100, maxRun},
		{"a parent window ends the run", append(ws(1, 3, 4), window{part: -1, rows: -1}, window{part: 5, rows: 1}), 25, 2},
		{"a window of unknown size is the run's last", append(ws(1, 3, 4), window{part: 5, rows: -1}, window{part: 6, rows: 1}), 25, 3},
		{"the run ends at its block's edge", ws(1, 7, 12, 20, 23, 24, 25), 25, 4},
		{"gaps within the block", ws(1, 8, 14, 22, 31, 32), 25, 4},
		{"descending, within the block below", ws(1, 24, 16, 9, 8, 7), 25, 4},
		{"the page's last window may not leave the block either", ws(10, 7, 23, 24), 25, 2},
	} {
		if got := runOf(c.todo, c.remaining); got != c.want {
			t.Errorf("%s: %d windows, want %d", c.name, got, c.want)
		}
	}
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
