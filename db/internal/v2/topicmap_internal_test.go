package v2

import (
	"math"
	"testing"
)

// TestMapStore: windows come back as kept, unchanged by later puts, until
// they are out of date or forgotten; past the bound the store drops the
// windows of maps learned again, then the least recently learned maps; a
// topic with more windows than a slab gets a slab of its own.
func TestMapStore(t *testing.T) {
	mk := func(n int, seq int64) []window {
		ws := make([]window, n)
		for i := range ws {
			ws[i] = window{part: int32(i), seqLo: seq, seqHi: seq + 1} //nolint:gosec // small
		}
		return ws
	}
	var s mapStore
	if _, ok := s.get(1, 0); ok {
		t.Fatal("an empty store had topic 1")
	}
	a := s.put(1, mk(3, 10), 100, 1000)
	b := s.put(2, mk(5, 20), 100, math.MaxInt64)
	big := s.put(3, mk(slabWindows+1, 30), 100, math.MaxInt64)
	if len(a) != 3 || cap(a) != 3 || len(b) != 5 || len(big) != slabWindows+1 {
		t.Fatalf("kept %d/%d, %d, %d windows", len(a), cap(a), len(b), len(big))
	}
	_ = append(a, window{seqLo: -1}) // a caller appending gets its own array
	got, ok := s.get(1, 500)
	if !ok || len(got) != 3 || got[0].seqLo != 10 || got[2].part != 2 {
		t.Fatalf("topic 1: %v %v", got, ok)
	}
	if got, ok := s.get(2, 500); !ok || got[4].seqLo != 20 {
		t.Fatalf("topic 2 after topic 1's append: %v %v", got, ok)
	}
	if _, ok := s.get(1, 1000); ok {
		t.Error("topic 1 past its until")
	}
	if _, ok := s.get(2, 100+mapTTL); ok {
		t.Error("topic 2 past the maps' lifetime")
	}
	s.forget(2)
	if _, ok := s.get(2, 500); ok {
		t.Error("topic 2 forgotten, still there")
	}
	if s.bytes() <= 0 {
		t.Error("no bytes counted")
	}
	// Past the bound, maps learned again leave no windows behind: a topic
	// learned again and again never pushes the others out.
	for i := 0; i < 4*maxMapWindows/(slabWindows/2); i++ {
		s.put(4, mk(slabWindows/2, int64(i)), 200+int64(i), math.MaxInt64)
	}
	if got, ok := s.get(1, 500); !ok || got[0].seqLo != 10 {
		t.Errorf("topic 1 forgotten while only topic 4 was learned again: %v", ok)
	}
	if got, ok := s.get(4, 500); !ok || got[0].seqLo != int64(4*maxMapWindows/(slabWindows/2)-1) {
		t.Errorf("topic 4: not its newest windows")
	}
	if s.n > maxMapWindows {
		t.Errorf("%d windows kept, bound %d", s.n, maxMapWindows)
	}
	// Past the bound with live maps alone, the least recently learned go.
	for topic := int64(10); topic < 10+2*maxMapWindows/(slabWindows/2); topic++ {
		s.put(topic, mk(slabWindows/2, topic), 10_000+topic, math.MaxInt64)
	}
	newest := int64(10 + 2*maxMapWindows/(slabWindows/2) - 1)
	if got, ok := s.get(newest, 500); !ok || got[0].seqLo != newest {
		t.Errorf("the newest map was not kept")
	}
	if _, ok := s.get(10, 500); ok {
		t.Error("the oldest map kept past the bound")
	}
	if _, ok := s.get(1, 500); ok {
		t.Error("topic 1 (learned first) kept past the bound")
	}
	if s.n > maxMapWindows || s.n < maxMapWindows/2 {
		t.Errorf("%d windows kept, bound %d", s.n, maxMapWindows)
	}
	if a[0].seqLo != 10 || big[slabWindows].part != slabWindows {
		t.Error("windows handed out changed")
	}
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
	p := &Reader{messages: partitionSet{parts: parts}, server: postgresServer{}}
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
