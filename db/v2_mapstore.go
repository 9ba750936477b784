package db

import (
	"cmp"
	"slices"
	"sync"
	"unsafe"
)

// mapStore keeps the topic maps' windows where the collector need not look
// at them: an index of plain values (a Go map without pointers is not
// scanned) and slabs of windows (no pointers either): objects of their own
// per topic, many thousands of maps would be work for every cycle of the
// collector, paid by every request.
//
// Windows are only ever appended to a slab, past the slices handed out, so
// a reader's windows never change under it. A map learned again leaves its
// old windows behind in their slab; past maxMapWindows the store compacts:
// the maps still indexed are copied into new slabs (the collector takes the
// old ones once no reader holds them), and only if they alone still fill
// the store are some forgotten, the least recently learned first: a store
// cleared whole when full would have many sparse topics' maps learned again
// (a statement each) over and over.
type mapStore struct {
	mu    sync.RWMutex
	index map[int64]mapRef
	slabs [][]window
	n     int64 // windows in the slabs, those of maps learned again included
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
	if s.index == nil {
		s.index = map[int64]mapRef{}
	}
	delete(s.index, topic) // its windows, if kept, are left behind
	if s.n+int64(n) > maxMapWindows {
		s.compact(maxMapWindows - int64(n))
	}
	s.add(topic, ws, learned, until)
	r := s.index[topic]
	return s.slabs[r.slab][r.off : r.off+r.n : r.off+r.n]
}

// add appends the topic's windows to the slabs and indexes them.
func (s *mapStore) add(topic int64, ws []window, learned, until int64) {
	n := len(ws)
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
}

// compact copies the indexed maps into new slabs, so that at most room
// windows are kept: first forgetting, the least recently learned first,
// as many maps as it takes to come down to seven eighths of room (a store
// that is full of live maps then compacts again only after many puts).
func (s *mapStore) compact(room int64) {
	type kept struct {
		topic int64
		ref   mapRef
	}
	live, total := make([]kept, 0, len(s.index)), int64(0)
	for topic, r := range s.index {
		live = append(live, kept{topic, r})
		total += int64(r.n)
	}
	if total > room {
		slices.SortFunc(live, func(a, b kept) int { return cmp.Compare(b.ref.learned, a.ref.learned) })
		for total > room-room/8 && len(live) > 0 {
			total -= int64(live[len(live)-1].ref.n)
			live = live[:len(live)-1]
		}
	}
	old := s.slabs
	s.index, s.slabs, s.n = make(map[int64]mapRef, len(live)), nil, 0
	for _, k := range live {
		s.add(k.topic, old[k.ref.slab][k.ref.off:k.ref.off+k.ref.n], k.ref.learned, k.ref.until)
	}
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
