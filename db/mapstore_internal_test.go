package db

import (
	"math"
	"testing"
)

// TestMapStore: windows come back as kept, unchanged by later puts, until
// they are out of date, forgotten, or everything is forgotten past the
// bound; a topic with more windows than a slab gets a slab of its own.
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
	// past the bound everything is forgotten; windows handed out stay as they were
	for topic := int64(10); s.n+slabWindows/2 <= maxMapWindows; topic++ {
		s.put(topic, mk(slabWindows/2, topic), 100, math.MaxInt64)
	}
	s.put(99_999, mk(slabWindows/2, 7), 100, math.MaxInt64)
	if _, ok := s.get(1, 500); ok {
		t.Error("topic 1 kept past the bound")
	}
	if got, ok := s.get(99_999, 500); !ok || got[0].seqLo != 7 || s.n != slabWindows/2 {
		t.Errorf("after the bound: %v %v, %d windows", len(got), ok, s.n)
	}
	if a[0].seqLo != 10 || big[slabWindows].part != slabWindows {
		t.Error("windows handed out changed")
	}
}
