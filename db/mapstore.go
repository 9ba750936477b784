package db

import (
	"slices"
	"sync"
	"unsafe"
)

// mapStore keeps the topic maps' windows where the collector need not look
// at them: an index of plain values (a Go map without pointers is not
// scanned) and slabs of windows (no pointers either). Kept as a map per
// topic (a sync.Map entry, a map object and its windows each), ten thousand
// sparse topics' maps were tens of thousands of objects for every cycle of
// the collector to mark, and the v2 service spent 15–40 % more CPU on a
// hot topic's page once they were learned.
//
// Windows are only ever appended to a slab, past the slices handed out, so
// a reader's windows never change under it; forgetting everything (past
// maxMapWindows) starts new slabs and lets the collector take the old ones
// once no reader holds them.
type mapStore struct {
	mu    sync.RWMutex
	index map[int64]mapRef
	slabs [][]window
	n     int64 // windows kept
}

// mapRef is where a topic's windows are, and how long they hold.
type mapRef struct {
	slab, off, n   int32
	learned, until int64
}

// slabWindows is the length of a slab (384 KiB).
const slabWindows = 8192

// get is the topic's windows, if kept and current at now.
func (s *mapStore) get(topic, now int64) ([]window, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.index[topic]
	if !ok || now-r.learned >= mapTTL || now >= r.until {
		return nil, false
	}
	return s.slabs[r.slab][r.off : r.off+r.n : r.off+r.n], true
}

// put keeps the topic's windows, learned at a time and good until another,
// and returns the kept copy.
func (s *mapStore) put(topic int64, ws []window, learned, until int64) []window {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(ws)
	if s.index == nil || s.n+int64(n) > maxMapWindows {
		s.index, s.slabs, s.n = map[int64]mapRef{}, nil, 0
	}
	last := len(s.slabs) - 1
	switch {
	case n > slabWindows: // more windows than a slab holds: a slab of its own
		s.slabs = append(s.slabs, slices.Clip(slices.Clone(ws)))
		last = len(s.slabs) - 1
	case last < 0 || len(s.slabs[last])+n > cap(s.slabs[last]):
		s.slabs = append(s.slabs, make([]window, 0, slabWindows))
		last++
		fallthrough
	default:
		s.slabs[last] = append(s.slabs[last], ws...)
	}
	end := len(s.slabs[last])
	s.index[topic] = mapRef{slab: int32(last), off: int32(end - n), n: int32(n), learned: learned, until: until} //nolint:gosec // bounded by maxMapWindows
	s.n += int64(n)
	return s.slabs[last][end-n : end : end]
}

// forget drops the topic's windows (their room is taken back when
// everything is forgotten).
func (s *mapStore) forget(topic int64) {
	s.mu.Lock()
	delete(s.index, topic)
	s.mu.Unlock()
}

// bytes is about what the store holds: its slabs and its index.
func (s *mapStore) bytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.slabs))*slabWindows*int64(unsafe.Sizeof(window{})) + int64(len(s.index))*int64(unsafe.Sizeof(mapRef{})+8)
}
