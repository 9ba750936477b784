package v2

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"mirrorql/model"
)

// TestActivityPlan walks the activity planner without a database: each
// boundary is asked of the window that holds it, a pass's boundaries are
// cut into statements by block of partitions (a window on the parent table
// alone), a boundary its window had nothing after moves on to the next
// window, and one answered in the map's tail says the map is behind.
func TestActivityPlan(t *testing.T) {
	ws := []window{
		{part: 0, lo: 0, hi: 100},
		{part: 1, lo: 100, hi: 200},
		{part: 40, lo: 200, hi: 300}, // another block of partitions
		{part: -1, why: whyTail, lo: 300, hi: 1 << 62},
	}
	bounds := []model.Timestamp{50, 150, 160, 250, 400, 5000}
	pl := planActivity(ws, bounds)
	if want := []int{0, 1, 1, 2, 3, 3}; !slices.Equal(pl.at, want) {
		t.Fatalf("windows %v, want %v", pl.at, want)
	}

	stmts := pl.pass()
	type got struct {
		bounds   []int
		los, his []int64
	}
	var seen []got
	for _, s := range stmts {
		seen = append(seen, got{slices.Clone(s.bounds), slices.Clone(s.los), slices.Clone(s.his)})
		if s.lo != slices.Min(s.los) || s.hi != slices.Max(s.his) {
			t.Errorf("statement %v: range [%d, %d)", s.bounds, s.lo, s.hi)
		}
	}
	want := []got{
		{[]int{0, 1, 2}, []int64{50, 150, 160}, []int64{100, 200, 200}}, // partitions 0 and 1: one block
		{[]int{3}, []int64{250}, []int64{300}},                          // partition 40: a block of its own
		{[]int{4}, []int64{400}, []int64{1 << 62}},                      // the parent table: alone
		{[]int{5}, []int64{5000}, []int64{1 << 62}},
	}
	if !slices.EqualFunc(seen, want, func(a, b got) bool {
		return slices.Equal(a.bounds, b.bounds) && slices.Equal(a.los, b.los) && slices.Equal(a.his, b.his)
	}) {
		t.Fatalf("first pass %+v, want %+v", seen, want)
	}

	// Answers: boundary 0 and 3 found theirs; 1 and 2 did not (their window
	// ends before a message); 4 found one in the tail; 5 none.
	pl.firsts[0], pl.firsts[3], pl.firsts[4] = 7, 30, 41
	if !pl.next() {
		t.Errorf("a boundary answered in the tail window: the map is behind")
	}
	if want := []int{0, 2, 2, 2, 3, 4}; !slices.Equal(pl.at, want) {
		t.Fatalf("after the first pass, windows %v, want %v", pl.at, want)
	}
	stmts = pl.pass()
	if len(stmts) != 1 || !slices.Equal(stmts[0].bounds, []int{1, 2}) || !slices.Equal(stmts[0].los, []int64{200, 200}) {
		t.Fatalf("second pass %+v: want boundaries 1 and 2 from the start of window 2", stmts)
	}
	pl.firsts[1], pl.firsts[2] = 21, 21
	if pl.next() {
		t.Errorf("answered in partition 40's window: nothing says the map is behind")
	}
	if stmts = pl.pass(); len(stmts) != 0 {
		t.Fatalf("third pass %+v: every boundary answered or out of windows", stmts)
	}
	if want := []int64{7, 21, 21, 30, 41, -1}; !slices.Equal(pl.firsts, want) {
		t.Errorf("firsts %v, want %v (the last is past the topic's end)", pl.firsts, want)
	}
}

// TestGuessLast: an activity read whose last boundary lies in the topic's
// newest window sends the latest page's first statement (that window's
// partition, by its name, newest first, one row) with its first pass; one
// whose last boundary is earlier, or whose newest window has no partition
// to name, guesses nothing. The guess answers only with a row from the
// catalog's storage, and never one older than a pass found.
func TestGuessLast(t *testing.T) {
	parts := []partition{{name: `"p0"`, lo: 0, hi: 100, filenode: 10}, {name: `"p1"`, lo: 100, hi: 200, filenode: 11}}
	for i := range parts {
		parts[i].check = postgresServer{}.checkColumn(&parts[i])
	}
	p := &Reader{messages: partitionSet{parts: parts}, server: postgresServer{}}
	ws := []window{
		{part: 0, lo: 0, hi: 100, seqLo: 1, seqHi: 5, rows: 4},
		{part: 1, lo: 100, hi: 200, seqLo: 5, seqHi: math.MaxInt64, rows: -1, why: whyTail},
	}
	if g := p.guessLast(7, ws, []model.Timestamp{10, 90}); g != nil {
		t.Errorf("last boundary before the newest window: guessed %q", g.piped.SQL)
	}
	parent := []window{ws[0], {part: -1, lo: 100, hi: 200, rows: -1, why: whyTail}}
	if g := p.guessLast(7, parent, []model.Timestamp{10, 150}); g != nil {
		t.Errorf("newest window on the parent table: guessed %q", g.piped.SQL)
	}
	g := p.guessLast(7, ws, []model.Timestamp{10, 150})
	if g == nil {
		t.Fatal("last boundary in the newest window: no guess")
	}
	if !strings.Contains(g.piped.SQL, `'"p1"'`) || !strings.Contains(g.piped.SQL, "ORDER BY sequence_number DESC LIMIT $5") ||
		g.piped.Args[0] != int64(7) || g.piped.Args[4] != int64(1) {
		t.Errorf("guess %q %v: want partition p1's page, newest first, one row", g.piped.SQL, g.piped.Args)
	}
	if m, err := g.latest(0); m != nil || err != nil {
		t.Errorf("nothing found: latest %v, %v; want none (latest reads the page)", m, err)
	}
	g.rows.out, g.rows.check = append(g.rows.out, model.TopicMessage{SequenceNumber: 9}), 11
	if m, err := g.latest(8); err != nil || m == nil || m.SequenceNumber != 9 {
		t.Errorf("found 9: latest %v, %v", m, err)
	}
	if m, err := g.latest(10); m != nil || err != nil {
		t.Errorf("a pass found 10, newer than the guess's 9: latest %v, %v; want none", m, err)
	}
	if g.rows.check = 99; !errors.Is(func() error { _, err := g.latest(0); return err }(), errStale) {
		t.Errorf("a row from storage other than the catalog's: want errStale")
	}
}
