package v2

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// A topic map says, for one topic, which partitions hold which of its
// sequence numbers and timestamps: the rows of topic_message_lookup where the
// importer keeps it, else learned from the partitions themselves (min and max
// of each, on their indexes). It is learned once per topic and kept, as
// the windows it makes (topicWindows: looked up in the store, mapStore,
// learned and put there on a miss): the importer writes a topic's messages
// in consensus order, so a partition the map has seen in the past does not
// change, and what came after the map was learned lies past its newest
// segment, where every read also looks (the tail). A TRUNCATE (a database
// reset) gives the partitions new storage: reads notice the new filenode
// and start afresh.

// segment: the topic's sequence numbers [seqLo, seqHi) live in partition
// part (an index into the catalog, -1 when no partition holds that time any
// more), between the timestamps [tsLo, tsHi).
type segment struct {
	part         int
	seqLo, seqHi int64
	tsLo, tsHi   int64
}

// topicMap is one topic's segments, in sequence order, as learned at a
// time. What is kept is the windows they make (mapStore), good until a
// partition becomes current, when the map is learned again.
type topicMap struct {
	segs    []segment
	learned int64 // when, in Unix nanoseconds
	lookup  bool  // learned from topic_message_lookup, which may lack rows
}

// Timing of the maps. A map vouches for the messages written before it was
// learned, less commitLag: the importer commits a message (and its lookup
// row) within that much consensus time of its timestamp. Everything later
// is the tail, read on every request. A map is learned again after mapTTL,
// so that the tail stays a partition or two.
const (
	commitLag = int64(time.Hour)
	mapTTL    = int64(10 * time.Minute)
)

// maxMapWindows bounds the maps kept, in windows (48 bytes each, without
// pointers, in mapStore's slabs, so the collector does not walk them): past
// it the least recently learned are forgotten (a map costs a statement to
// learn again, about as much as a sparse topic's page itself). The bound
// is about ten thousand sparse topics' maps (a few hundred messages over
// thirty partitions each), within the service's memory budget (server.go).
const maxMapWindows = 360_000

// lookupSQL: the topic's rows of topic_message_lookup (its primary key).
const lookupSQL = "SELECT partition, lower(sequence_number_range), upper(sequence_number_range), " +
	"lower(timestamp_range), upper(timestamp_range) FROM topic_message_lookup WHERE topic_id = $1"

// topicWindows are the windows of the topic's map, learned on first use
// and again once out of date.
func (p *Reader) topicWindows(ctx context.Context, topic int64) ([]window, error) {
	now := time.Now().UnixNano()
	if ws, ok := p.maps.get(topic, now); ok {
		return ws, nil
	}
	m, err := p.learnTopicMap(ctx, topic)
	if err != nil {
		return nil, err
	}
	ws, until := m.windows(p, now)
	return p.maps.put(topic, ws, m.learned, until), nil
}

// forget drops the topic's map: its tail held messages, so it is behind.
func (p *Reader) forget(topic int64) { p.maps.forget(topic) }

// learnTopicMap reads the topic's map from the lookup or the partitions.
func (p *Reader) learnTopicMap(ctx context.Context, topic int64) (*topicMap, error) {
	learned := time.Now().UnixNano()
	var segs []segment
	read := func(rows driver.RowSource) error {
		for rows.Next() {
			var rel pgtype.Text
			var seqLo, seqHi, tsLo, tsHi pgtype.Int8
			if err := rows.Scan(&rel, &seqLo, &seqHi, &tsLo, &tsHi); err != nil {
				return err
			}
			if !seqLo.Valid || !seqHi.Valid || !tsLo.Valid || !tsHi.Valid || seqLo.Int64 >= seqHi.Int64 || tsLo.Int64 >= tsHi.Int64 {
				continue // an empty or unbounded range vouches for nothing
			}
			segs = append(segs, segment{seqLo: seqLo.Int64, seqHi: seqHi.Int64, tsLo: tsLo.Int64, tsHi: tsHi.Int64})
		}
		return rows.Err()
	}
	lookup := p.l.UseLookup
	if lookup {
		if err := p.env.Query(ctx, read, lookupSQL, topic); err != nil {
			return nil, fmt.Errorf("partitions of topic %d: %w", topic, err)
		}
		if len(segs) == 0 {
			// The lookup knows nothing of the topic: it has no message, or
			// the lookup lacks its rows. Learn from the partitions, rather
			// than read every partition at every request.
			lookup = false
			p.state.fallbacks.add(whyEmpty, 1)
		}
	}
	// A statement per probeChunk partitions: each holds a lock on every
	// partition and index it names until it ends, and the server's lock
	// table is shared by all its connections.
	parts := p.messages.parts
	for i := 0; !lookup && i < len(parts); i += probeChunk {
		if err := p.env.Query(ctx, read, probeSQL(parts[i:min(i+probeChunk, len(parts))]), topic); err != nil {
			return nil, fmt.Errorf("partitions of topic %d: %w", topic, err)
		}
	}
	for i := range segs {
		// The partition is the one that holds the timestamps: the lookup's
		// partition name is not needed, and a row naming a partition that
		// was detached or renamed cannot send a read astray.
		segs[i].part = p.messages.find(segs[i].tsLo)
		if segs[i].part >= 0 && p.messages.find(segs[i].tsHi-1) != segs[i].part {
			segs[i].part = -2 // spans partitions: inconsistent, read by bounds
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].seqLo < segs[j].seqLo })
	return &topicMap{segs: segs, learned: learned, lookup: lookup}, nil
}

// probeChunk is how many partitions one probe statement reads.
const probeChunk = 12

// probeSQL learns a topic's segments from the partitions themselves: the
// min and max of each partition's indexes for the topic (four index probes
// a partition), for a database whose lookup is not kept. Sent once per topic.
func probeSQL(parts []partition) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT " + quoteLiteral(p.rel) + "::text, min(sequence_number), max(sequence_number) + 1, " +
			"min(consensus_timestamp), max(consensus_timestamp) + 1 FROM " + p.name + " WHERE topic_id = $1")
	}
	return b.String()
}

// quoteLiteral is s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// window is a stretch of consensus time read by one statement: one
// partition by its name (part >= 0), or the parent table bounded by
// [lo, hi) (part < 0) where the map cannot name the partitions. The topic's
// messages in it have sequence numbers in [seqLo, seqHi).
type window struct {
	part         int32
	why          why   // for a parent window: what the map could not vouch for
	rows         int32 // how many of the topic's messages its segments hold (at most MaxInt32); -1 unknown
	lo, hi       int64
	seqLo, seqHi int64
}

// why is a reason a window reads the parent table.
type why uint8

const (
	whyNone  why = iota
	whyTail      // past the newest segment: the newest messages, or a lookup that lags
	whyHead      // before the oldest segment, which does not start at sequence number 1
	whyGap       // between two segments whose sequence numbers do not meet (a missing lookup row)
	whySpan      // a segment whose timestamps span partitions
	whyEmpty     // a topic with no segment at all
	whyStale     // not a window's: a catalog read again because the database changed under it
)

// String is the reason as the fallback counter's label.
func (w why) String() string {
	return [...]string{"", "tail", "head", "gap", "span", "empty", "stale"}[w]
}

// rowCount is a window's count of rows, saturated: pages need to know only
// whether a window holds fewer rows than they ask for.
func rowCount(n int64) int32 { return int32(min(n, math.MaxInt32)) } //nolint:gosec // bounded

// windows covers consensus time for the topic, in order, each partition at
// most once: the partitions of its segments by name; the partitions of the
// tail (from the one holding the map's learning time less commitLag, up to
// the current one, and any later one that held rows when the catalog was
// read) by name; and, from a lookup, by bounds what lies before and between
// its segments where the lookup lacks rows. until is when a partition
// becomes current and the windows must be computed again.
func (m *topicMap) windows(p *Reader, now int64) (out []window, until int64) {
	parts := p.messages.parts
	until = math.MaxInt64
	whole := []window{{part: -1, lo: math.MinInt64, hi: math.MaxInt64, seqLo: math.MinInt64, seqHi: math.MaxInt64, why: whyEmpty, rows: -1}}
	if len(parts) == 0 || (m.lookup && len(m.segs) == 0) {
		// Nothing routable, or a lookup that knows nothing of the topic
		// (it may lack its rows): read everything.
		return whole, until
	}
	// The tail: partitions from tailFrom on.
	tailFrom := sort.Search(len(parts), func(i int) bool { return parts[i].hi > m.learned-commitLag })
	groups, tailSeq := groupSegments(parts, m.segs, tailFrom)
	below := int64(math.MinInt64) // sequence numbers vouched for before the window
	if m.lookup && len(groups) > 0 && groups[0].seqLo > 1 {
		if lo := parts[groups[0].first].lo; lo > math.MinInt64 {
			out = append(out, window{part: -1, lo: math.MinInt64, hi: lo, seqLo: math.MinInt64, seqHi: groups[0].seqLo, why: whyHead, rows: -1})
		}
	}
	for i, g := range groups {
		if i > 0 {
			prev := groups[i-1]
			// From a lookup, sequence numbers that do not meet may be in
			// the partitions between, which it has no row for. Learned
			// from the partitions, those partitions hold none of the
			// topic's messages.
			if m.lookup && prev.seqHi < g.seqLo && prev.last+1 < g.first {
				out = append(out, window{part: -1, lo: parts[prev.last+1].lo, hi: parts[g.first].lo,
					seqLo: prev.seqHi, seqHi: g.seqLo, why: whyGap, rows: -1})
			}
			below = prev.seqHi
		}
		above := tailSeq
		if i+1 < len(groups) {
			above = groups[i+1].seqLo
		}
		w := window{part: int32(g.first), lo: parts[g.first].lo, hi: parts[g.last].hi, seqLo: below, seqHi: above, rows: rowCount(g.rows)} //nolint:gosec // a partition index
		if g.first != g.last {
			w.part, w.why = -1, whySpan
		}
		out = append(out, w)
	}
	// The tail holds what comes after the groups' sequence numbers.
	below = math.MinInt64
	if len(groups) > 0 {
		below = min(groups[len(groups)-1].seqHi, tailSeq)
	}
	// The tail: the partitions from the newest segment's on (v2Server.tail).
	out = append(out, p.server.tail(parts, tailFrom, below, now, &until)...)
	return out, until
}

// segGroup is the segments of a topic's map in one partition (or a span of
// them: first < last).
type segGroup struct {
	first, last  int // partition indexes (equal but for a span)
	seqLo, seqHi int64
	rows         int64
}

// groupSegments groups the segments before the tail (partitions from
// tailFrom on) by partition, dropping those whose time no partition holds
// (nothing of theirs is in the table any more); tailSeq is the lowest
// sequence number a segment in the tail starts at.
func groupSegments(parts []partition, segs []segment, tailFrom int) (groups []segGroup, tailSeq int64) {
	tailSeq = math.MaxInt64
	for _, s := range segs {
		first, last := s.part, s.part
		switch {
		case s.part == -1:
			continue
		case s.part == -2:
			first, last = findPart(parts, s.tsLo), findPart(parts, s.tsHi-1)
			if first < 0 || last < 0 {
				continue
			}
		}
		if last >= tailFrom {
			tailSeq = min(tailSeq, s.seqLo)
			if first >= tailFrom {
				continue
			}
			last = tailFrom - 1 // its part in the tail is read as the tail
		}
		if n := len(groups); n > 0 && first <= groups[n-1].last {
			g := &groups[n-1] // the same partition again (or an inconsistent overlap)
			g.last = max(g.last, last)
			g.seqHi = max(g.seqHi, s.seqHi)
			g.rows += s.seqHi - s.seqLo
			continue
		}
		groups = append(groups, segGroup{first: first, last: last, seqLo: s.seqLo, seqHi: s.seqHi, rows: s.seqHi - s.seqLo})
	}
	return groups, tailSeq
}

// findPart is partitionSet.find over a slice.
func findPart(parts []partition, ts int64) int {
	s := partitionSet{parts: parts}
	return s.find(ts)
}

// overlaps: the window may hold messages of the range of sequence numbers
// [seq.Lo, seq.Hi] and of timestamps [ts.Lo, ts.Hi] (inclusive).
func (w window) overlaps(seq, ts model.Range) bool {
	return w.seqLo <= seq.Hi && seq.Lo < w.seqHi && w.lo <= ts.Hi && ts.Lo < w.hi
}

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
