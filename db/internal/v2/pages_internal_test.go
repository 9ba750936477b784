package v2

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// TestPageQueryOf: a filter comes to the statements as a shape (the column
// its ranges and order are on), its ranges and the exclusion lists that
// shape binds; a filter that asks for no row is no query at all (no
// statement is sent).
func TestPageQueryOf(t *testing.T) {
	seq := &model.Range{Lo: 3, Hi: math.MaxInt64, Not: []int64{5}}
	ts := &model.Range{Lo: math.MinInt64, Hi: 89, Not: []int64{7}}
	for _, c := range []struct {
		name          string
		f             app.MessageFilter
		ok            bool
		shape         pageShape
		seqNot, tsNot string
	}{
		{"sequence numbers alone", app.MessageFilter{SequenceNumber: seq, Limit: 5}, true, shapeSequence, "{5}", ""},
		{"timestamps alone", app.MessageFilter{Timestamp: ts, Limit: 5}, true, shapeTimestamp, "", "{7}"},
		{"no condition", app.MessageFilter{Limit: 5}, true, shapeTimestamp, "", "{}"},
		{"both", app.MessageFilter{SequenceNumber: seq, Timestamp: ts, Limit: 5}, true, shapeMixed, "{5}", "{7}"},
		{"no row asked for", app.MessageFilter{SequenceNumber: seq}, false, 0, "", ""},
	} {
		q, ok := pageQueryOf(&c.f)
		if ok != c.ok || (ok && (q.shape != c.shape || q.seqNot != c.seqNot || q.tsNot != c.tsNot || q.limit != c.f.Limit)) {
			t.Errorf("%s: %+v, %t; want shape %d, exclusions %q %q, %t", c.name, q, ok, c.shape, c.seqNot, c.tsNot, c.ok)
		}
	}
}

// TestPlanPage: a page's plan reads the windows that may hold its rows, in
// the page's order, cutting them into statements as the rows come (a run of
// windows too small to fill the page alone, one window by its partition,
// one on the parent table), and stops once the page has its rows; a page
// that came back short, that no statement by a partition's name found rows
// for, ends with a check of the catalog (of the partition read last).
func TestPlanPage(t *testing.T) {
	// a window of partition part, [part*10, part*10+10), with rows of the
	// topic's messages (-1: unknown) from sequence number seq on
	named := func(part int32, seq int64, rows int32) window {
		lo := int64(part) * 10
		hi := seq + int64(rows)
		if rows < 0 {
			hi = math.MaxInt64
		}
		return window{part: part, lo: lo, hi: lo + 10, seqLo: seq, seqHi: hi, rows: rows}
	}
	parent := func(lo, hi int64, reason why) window {
		return window{part: -1, why: reason, lo: lo, hi: hi, seqLo: math.MinInt64, seqHi: math.MaxInt64, rows: -1}
	}
	whole := parent(math.MinInt64, math.MaxInt64, whyEmpty)
	type step struct {
		kind        stepKind
		first, last int32 // partitions
		lo, hi      int64
		limit       int64
		rows        int // what the statement is taken to return
	}
	page := func(limit int, o model.Order, seq ...model.Range) app.MessageFilter {
		f := app.MessageFilter{TopicID: 7, Order: o, Limit: limit}
		if len(seq) > 0 {
			f.SequenceNumber = &seq[0]
		}
		return f
	}
	sparse := []window{named(0, 1, 2), named(1, 3, 2), named(2, 5, 2), named(3, 7, 2), named(4, 9, -1)}
	for _, c := range []struct {
		name  string
		f     app.MessageFilter
		ws    []window
		steps []step
	}{
		{"one window fills the page", page(25, model.Asc), []window{named(0, 1, 100), named(1, 101, 100), named(2, 201, -1)},
			[]step{{stepPartition, 0, 0, 0, 10, 25, 25}}},
		{"newest first, window by window", page(25, model.Desc), []window{named(0, 1, 100), named(1, 101, 100), named(2, 201, -1)},
			[]step{{stepPartition, 2, 2, 20, 30, 25, 10}, {stepPartition, 1, 1, 10, 20, 15, 15}}},
		{"a sparse topic: one run, and the tail with it", page(25, model.Asc), sparse,
			[]step{{stepRun, 0, 4, 0, 50, 25, 9}}},
		{"a run that filled less than its windows hold, then a window alone", page(8, model.Asc),
			[]window{named(0, 1, 3), named(1, 4, 3), named(2, 7, 100), named(3, 107, 100)},
			[]step{{stepRun, 0, 2, 0, 30, 8, 5}, {stepPartition, 3, 3, 30, 40, 3, 3}}},
		{"the filter leaves windows out", page(25, model.Asc, model.Range{Lo: 4, Hi: 6}), sparse,
			[]step{{stepRun, 1, 2, 10, 30, 25, 3}}},
		{"a short page nothing vouched for: the catalog checked", page(25, model.Asc), []window{named(0, 1, 100), named(1, 101, 100)},
			[]step{{stepPartition, 0, 0, 0, 10, 25, 0}, {stepPartition, 1, 1, 10, 20, 25, 0}, {stepCheck, 1, 1, 0, 0, 0, 0}}},
		{"a parent window, then the check of the first partition", page(25, model.Asc), []window{parent(0, 20, whyGap)},
			[]step{{stepParent, -1, -1, 0, 20, 25, 4}, {stepCheck, -1, -1, 0, 0, 0, 0}}},
		{"one window over everything needs no check", page(25, model.Asc), []window{whole},
			[]step{{stepParent, -1, -1, math.MinInt64, math.MaxInt64, 25, 3}}},
		{"rows found by a partition's name vouch for a short page", page(25, model.Asc), []window{parent(math.MinInt64, 0, whyHead), named(0, 1, 5)},
			[]step{{stepParent, -1, -1, math.MinInt64, 0, 25, 0}, {stepPartition, 0, 0, 0, 10, 25, 5}}},
	} {
		q, ok := pageQueryOf(&c.f)
		if !ok {
			t.Fatalf("%s: no query", c.name)
		}
		pl := planPage(&q, c.ws, nil)
		read, found := 0, false
		for i := 0; ; i++ {
			s, more := pl.next(read, found)
			if !more {
				if i != len(c.steps) {
					t.Errorf("%s: %d statements, want %d", c.name, i, len(c.steps))
				}
				break
			}
			if i == len(c.steps) {
				t.Errorf("%s: statement %d %+v past the %d wanted", c.name, i, s, len(c.steps))
				break
			}
			want := c.steps[i]
			got := step{s.kind, s.first, s.last, s.lo, s.hi, s.limit, want.rows}
			if s.kind == stepCheck {
				got.lo, got.hi = 0, 0
			}
			if got != want {
				t.Errorf("%s: statement %d is %+v, want %+v", c.name, i, got, want)
			}
			read += want.rows
			found = s.kind != stepParent && want.rows > 0
		}
	}
}

// TestPageArgs: a statement's values are the topic, the shape's, the rows
// the page still needs as its limit, and for a statement on the parent table the
// stretch it reads.
func TestPageArgs(t *testing.T) {
	q, _ := pageQueryOf(&app.MessageFilter{Limit: 25,
		SequenceNumber: &model.Range{Lo: 3, Hi: math.MaxInt64},
		Timestamp:      &model.Range{Lo: math.MinInt64, Hi: 89}})
	all := model.Range{Lo: math.MinInt64, Hi: math.MaxInt64}
	for _, c := range []struct {
		s    pageStep
		want []any
	}{
		{pageStep{kind: stepPartition, lo: 10, hi: 20, limit: 25}, []any{int64(7), int64(3), all.Hi, "{}", all.Lo, int64(89), "{}", int64(25)}},
		{pageStep{kind: stepRun, lo: 10, hi: 40, limit: 5}, []any{int64(7), int64(3), all.Hi, "{}", all.Lo, int64(89), "{}", int64(5), int64(10), int64(40)}},
		{pageStep{kind: stepParent, lo: 10, hi: 20, limit: 5}, []any{int64(7), int64(3), all.Hi, "{}", all.Lo, int64(89), "{}", int64(5), int64(10), int64(20)}},
	} {
		if got := q.args(7, c.s); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.s, got, c.want)
		}
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

func TestDirection(t *testing.T) {
	for o, want := range map[model.Order]string{model.Asc: "ASC", model.Desc: "DESC", "": "ASC", "bogus": "ASC"} {
		if got := driver.Direction(o); got != want {
			t.Errorf("driver.Direction(%q) = %q, want %q", o, got, want)
		}
	}
}

// TestPlanAhead: the statements a page sends at once are those whose rows
// the map vouches for, each counted on the rows of its windows (or the
// page's remainder), up to the first of unknown size, which ends them; a
// window on the parent table is not among them; the plan itself is not
// moved.
func TestPlanAhead(t *testing.T) {
	named := func(part int32, rows int32) window {
		lo := int64(part) * 10
		return window{part: part, lo: lo, hi: lo + 10, seqLo: math.MinInt64, seqHi: math.MaxInt64, rows: rows}
	}
	tail := named(9, -1)
	q := pageQuery{shape: shapeTimestamp, seq: model.Unbounded(), ts: model.Unbounded(), limit: 10}
	for _, c := range []struct {
		name  string
		ws    []window
		kinds []stepKind
		want  []int
	}{
		{"one window fills the page", []window{named(0, 20), named(1, 20)}, []stepKind{stepPartition}, []int{10}},
		{"two windows, each alone", []window{named(0, 6), named(40, 20)}, []stepKind{stepPartition, stepPartition}, []int{6, 4}},
		{"a run, then the tail", []window{named(0, 2), named(1, 2), tail}, []stepKind{stepRun}, []int{-1}},
		{"a window, then one of unknown size", []window{named(0, 6), named(50, -1), named(60, 9)},
			[]stepKind{stepPartition, stepPartition}, []int{6, -1}},
		{"the parent ends them", []window{named(0, 6), {part: -1, lo: 10, hi: 20, rows: -1, why: whyGap}, named(2, 9)},
			[]stepKind{stepPartition}, []int{6}},
	} {
		pl := planPage(&q, c.ws, nil)
		before := len(pl.todo)
		steps, want := pl.ahead(0, false, nil, nil)
		kinds := make([]stepKind, len(steps))
		for i, s := range steps {
			kinds[i] = s.kind
		}
		if !slices.Equal(kinds, c.kinds) || !slices.Equal(want, c.want) || len(pl.todo) != before {
			t.Errorf("%s: steps %v wanting %v (plan left %d of %d windows); want %v wanting %v", c.name, kinds, want,
				len(pl.todo), before, c.kinds, c.want)
		}
	}
}

// aheadExec is a driver.Exec of pipelines alone: each statement's rows are
// those rows gives its partition (found by name in its text), up to its
// limit, each carrying the partition's check (its index plus 10).
type aheadExec struct {
	driver.Exec
	rows      map[string]int // by partition name
	pipelines [][]int        // each pipeline's statements' limits
}

func (x *aheadExec) Pipeline(_ context.Context, ps []driver.Piped) error {
	var limits []int
	for _, s := range ps {
		limit := int(s.Args[len(s.Args)-1].(int64))
		limits = append(limits, limit)
		for name, n := range x.rows {
			if strings.Contains(s.SQL, "'"+name+"'") {
				check := int64(10 + name[1] - '0')
				if err := s.Read(&fakeRows{n: min(n, limit), check: check, seq: int64(name[1]-'0') * 100}); err != nil {
					return err
				}
			}
		}
	}
	x.pipelines = append(x.pipelines, limits)
	return nil
}

// fakeRows are n rows of a page statement: the check, then messages with
// sequence numbers from seq on.
type fakeRows struct {
	n, i       int
	check, seq int64
}

func (r *fakeRows) Next() bool { r.i++; return r.i <= r.n }
func (r *fakeRows) Err() error { return nil }
func (r *fakeRows) Scan(dest ...any) error {
	*dest[0].(*int64) = r.check
	*dest[4].(*int64) = r.seq + int64(r.i)
	return nil
}

// TestRunAhead: a page sends the statements its map vouches for in one
// pipeline; when one reads fewer rows than the map said, the rows of those
// after it (whose limits were counted on it) are dropped and the page goes
// on from it, statement by statement, with the limits it then needs.
func TestRunAhead(t *testing.T) {
	parts := []partition{}
	for i := range 90 {
		name := fmt.Sprintf("p%d", i/40) // p0, p1, p2: partitions 0, 40 and 80
		if i%40 != 0 {
			name = fmt.Sprintf("x%d", i)
		}
		parts = append(parts, partition{name: name, lo: int64(i) * 10, hi: int64(i)*10 + 10, filenode: int64(10 + i/40)})
		parts[i].check = "'" + name + "'"
	}
	ws := []window{
		{part: 0, lo: 0, hi: 10, seqLo: 1, seqHi: 5, rows: 4},
		{part: 40, lo: 400, hi: 410, seqLo: 5, seqHi: 9, rows: 4},
		{part: 80, lo: 800, hi: 810, seqLo: 9, seqHi: math.MaxInt64, rows: 4},
	}
	q := pageQuery{shape: shapeTimestamp, seq: model.Unbounded(), ts: model.Unbounded(), limit: 10}
	for _, c := range []struct {
		name      string
		rows      map[string]int
		pipelines [][]int
		seqs      []int64
	}{
		{"as the map says", map[string]int{"p0": 4, "p1": 4, "p2": 4}, [][]int{{10, 6, 2}},
			[]int64{1, 2, 3, 4, 101, 102, 103, 104, 201, 202}},
		{"the second short", map[string]int{"p0": 4, "p1": 2, "p2": 4}, [][]int{{10, 6, 2}, {4}},
			[]int64{1, 2, 3, 4, 101, 102, 201, 202, 203, 204}},
	} {
		x := &aheadExec{rows: c.rows}
		p := &Reader{env: &driver.Env{Exec: x}, messages: partitionSet{parts: parts}, server: postgresServer{}, state: &v2State{}}
		pl := planPage(&q, ws, nil)
		out, err := p.runPage(context.Background(), 7, &q, &pl)
		seqs := make([]int64, len(out))
		for i, m := range out {
			seqs[i] = m.SequenceNumber
		}
		if err != nil || !slices.Equal(seqs, c.seqs) || !slices.EqualFunc(x.pipelines, c.pipelines, slices.Equal) {
			t.Errorf("%s: rows %v, pipelines' limits %v, %v; want %v, %v", c.name, seqs, x.pipelines, err, c.seqs, c.pipelines)
		}
	}
}
