package db

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
