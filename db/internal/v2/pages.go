package v2

import (
	"context"
	"math"
	"sort"
	"strconv"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// A page of a topic's messages on the v2 layout (reader.go tells the
// model): its filter as the statements take it, made once at the start
// (pageQueryOf: ranges, exclusion lists, direction), planned on the topic's
// windows (planPage: which windows, and which statement reads each), the
// plan run statement by statement (runPage). The filter is the same for
// every topic of a batch; the topic is the only thing that differs.

// messagesOfTopic is the page of f's topic: the reads of one topic's
// messages (its newest, its chunks, the lookups a map cannot place) ask it.
func (p *Reader) messagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	q, ok := pageQueryOf(&f)
	if !ok {
		return []model.TopicMessage{}, nil
	}
	return p.pageOf(ctx, int64(f.TopicID), &q)
}

// pageOf is the topic's page of q, answered anew on a catalog read again
// when the database changed under it (fresh).
func (p *Reader) pageOf(ctx context.Context, topic int64, q *pageQuery) ([]model.TopicMessage, error) {
	return fresh(ctx, p, func(p *Reader) ([]model.TopicMessage, error) { return p.readPage(ctx, topic, q) })
}

// readPage plans the topic's page of q on its windows and runs the plan.
func (p *Reader) readPage(ctx context.Context, topic int64, q *pageQuery) ([]model.TopicMessage, error) {
	ws, err := p.topicWindows(ctx, topic)
	if err != nil {
		return nil, err
	}
	var buf [8]window // most pages read one or two windows: on the stack
	pl := planPage(q, ws, buf[:0])
	return p.runPage(ctx, topic, q, &pl)
}

// pageQuery is a page's filter as its statements take it: a shape, an
// order, a range and an exclusion list per column, a limit; the same for
// any topic.
type pageQuery struct {
	shape         pageShape
	desc          bool
	dir           string // desc as the statements spell it (driver.Direction)
	seq, ts       model.Range
	seqNot, tsNot string // the exclusion lists the shape binds, as bound (NotArray)
	limit         int
}

// pageQueryOf is f's page as a query; false when f asks for no message.
func pageQueryOf(f *app.MessageFilter) (pageQuery, bool) {
	if f.Limit <= 0 {
		return pageQuery{}, false
	}
	seq, ts := driver.FilterRanges(f)
	q := pageQuery{shape: shapeMixed, desc: f.Order == model.Desc, dir: driver.Direction(f.Order), seq: seq, ts: ts, limit: f.Limit}
	switch {
	case driver.FilterBySequence(f):
		q.shape = shapeSequence
	case driver.FilterByTimestamp(f):
		q.shape = shapeTimestamp
	}
	if q.shape != shapeTimestamp {
		q.seqNot = driver.NotArray(seq)
	}
	if q.shape != shapeSequence {
		q.tsNot = driver.NotArray(ts)
	}
	return q, true
}

// pagePlan is how a page is read: the windows of the topic's map that may
// hold its rows, in the page's order, which next cuts into statements as
// the rows come, then perhaps a check of the catalog. (Apart from the
// query, whose values escape to the statements, so that the windows can
// stay on the caller's stack.)
type pagePlan struct {
	todo  []window
	limit int
	// vouched: the page needs no check of the catalog, as one window over
	// everything needs no map to be right, or once a statement by a
	// partition's name found rows (it returned the partition's check).
	vouched  bool
	lastPart int32 // the partition read last by its name (-1: none)
}

// planPage plans q's page on the topic's windows ws, appending those that
// may hold its rows, in its order, to todo.
func planPage(q *pageQuery, ws, todo []window) pagePlan {
	for n := range ws {
		w := ws[n]
		if q.desc {
			w = ws[len(ws)-1-n]
		}
		if w.overlaps(q.seq, q.ts) {
			todo = append(todo, w)
		}
	}
	return pagePlan{todo: todo, limit: q.limit, vouched: len(ws) == 1 && ws[0].why == whyEmpty, lastPart: -1}
}

// stepKind is what a statement of a plan reads.
type stepKind uint8

const (
	// stepPartition: one window, by its partition (sliceSQL).
	stepPartition stepKind = iota
	// stepRun: several windows too small to fill the page alone (a sparse
	// topic), in one statement on the parent table (runSQL).
	stepRun
	// stepCheck: no window; the check of a partition's storage
	// (checkCatalog).
	stepCheck
	// stepParent: one window the map cannot name a partition for, on the
	// parent table between its bounds (sliceSQL of wholeTable), planned for
	// them.
	stepParent
)

// pageStep is one statement of a plan.
type pageStep struct {
	kind        stepKind
	first, last int32 // the partitions it reads or checks (indexes into the catalog)
	why         why   // stepParent: what the map could not vouch for
	lo, hi      int64 // the stretch of consensus time it reads
	limit       int64 // the rows it may return: those the page still needs
}

// next is the plan's next statement once the page has read rows (found:
// the last statement read rows by a partition's name): the next windows',
// while the page needs rows and windows are left; then the catalog's check
// when the page came back short and no statement vouched that the map is
// current (an incomplete page may be missing what a stale map sent
// nowhere). False when none is left.
func (pl *pagePlan) next(read int, found bool) (pageStep, bool) {
	pl.vouched = pl.vouched || found
	remaining := int64(pl.limit - read)
	switch {
	case remaining <= 0:
		return pageStep{}, false
	case len(pl.todo) == 0 && pl.vouched:
		return pageStep{}, false
	case len(pl.todo) == 0:
		pl.vouched = true // checked once
		return pageStep{kind: stepCheck, first: pl.lastPart, last: pl.lastPart}, true
	}
	w, n := pl.todo[0], runOf(pl.todo, remaining)
	s := pageStep{first: w.part, last: w.part, why: w.why, lo: w.lo, hi: w.hi, limit: remaining}
	switch {
	case n > 1:
		s.kind = stepRun
		for _, w := range pl.todo[1:n] {
			s.first, s.last = min(s.first, w.part), max(s.last, w.part)
			s.lo, s.hi = min(s.lo, w.lo), max(s.hi, w.hi)
		}
	case w.part >= 0:
		s.kind = stepPartition
		pl.lastPart = w.part
	default:
		s.kind = stepParent
	}
	pl.todo = pl.todo[n:]
	return s, true
}

// args are the values of step s's statement on the topic: the shape's,
// then for a statement on the parent the bounds of the stretch it reads.
func (q *pageQuery) args(topic int64, s pageStep) []any {
	args := make([]any, 0, 10)
	args = append(args, topic)
	switch q.shape {
	case shapeSequence:
		args = append(args, q.seq.Lo, q.seq.Hi, q.seqNot, s.limit)
	case shapeTimestamp:
		args = append(args, q.ts.Lo, q.ts.Hi, q.tsNot, s.limit)
	default:
		args = append(args, q.seq.Lo, q.seq.Hi, q.seqNot, q.ts.Lo, q.ts.Hi, q.tsNot, s.limit)
	}
	if s.kind != stepPartition {
		args = append(args, s.lo, s.hi)
	}
	return args
}

// runPage sends the plan's statements one after another, reading their rows
// into the topic's page. A statement by a partition's name returns its check,
// which vouches that the catalog is current (readChecked); a window on the
// parent is counted as a fallback, and a tail that held rows has the
// topic's map forgotten (it is behind: learned again next time).
func (p *Reader) runPage(ctx context.Context, topic int64, q *pageQuery, pl *pagePlan) ([]model.TopicMessage, error) {
	r := &pageRows{out: make([]model.TopicMessage, 0, min(pl.limit, 128))}
	found := false
	for {
		if n, err := p.runAhead(ctx, topic, q, pl, r, &found); err != nil {
			return nil, err
		} else if n > 0 {
			continue
		}
		s, ok := pl.next(len(r.out), found)
		if !ok {
			return r.out, nil
		}
		before := len(r.out)
		var err error
		switch s.kind {
		case stepPartition, stepRun:
			read, part := p.named(q, topic, s, r.read)
			err = p.readChecked(ctx, read, part, r)
		case stepCheck:
			err = p.checkCatalog(ctx, s.first)
		default:
			sql, args := sliceSQL(q, wholeTable()), q.args(topic, s)
			err = p.env.QueryPlanned(ctx, r.read, sql, args...)
			if s.why != whyTail {
				p.state.fallbacks.add(s.why, 1) // the map could not vouch for this stretch
			} else if len(r.out) > before {
				p.state.fallbacks.add(whyTail, 1)
				p.forget(topic)
			}
		}
		if err != nil {
			return nil, err
		}
		found = s.kind != stepParent && len(r.out) > before
	}
}

// maxAhead is how many statements of a page runAhead sends at once at most.
const maxAhead = 8

// ahead is the plan's next statements while each is sure of the rows it
// reads: a statement by a partition's name (a window, or a run) whose
// windows the map knows the size of reads them all, or the rows the page
// still needs if fewer (want). The last may be of unknown size (want -1):
// nothing after it depends on it. Planned on a copy: pl is unchanged.
func (pl *pagePlan) ahead(read int, found bool, steps []pageStep, want []int) ([]pageStep, []int) {
	c := *pl
	for len(steps) < maxAhead {
		todo := c.todo
		s, ok := c.next(read, found)
		if !ok || (s.kind != stepPartition && s.kind != stepRun) {
			break
		}
		n := 0
		for _, w := range todo[:len(todo)-len(c.todo)] {
			if w.rows < 0 {
				n = -1
				break
			}
			n += int(w.rows)
		}
		steps = append(steps, s)
		if n < 0 {
			return steps, append(want, -1)
		}
		n = min(n, int(s.limit))
		want = append(want, n)
		read, found = read+n, n > 0
	}
	return steps, want
}

// runAhead sends the plan's next statements (ahead) in one pipeline when
// there are several, and moves the plan on past those whose rows came as
// the map said: a statement that read other than its windows' size (a map
// behind the table) ends the run there, its followers' rows dropped (their
// limits counted on it), and the page goes on from it statement by
// statement. n is how many statements it took (0: none sent, fewer than
// two to send).
func (p *Reader) runAhead(ctx context.Context, topic int64, q *pageQuery, pl *pagePlan, r *pageRows, found *bool) (n int, err error) {
	var sb [maxAhead]pageStep
	var wb [maxAhead]int
	steps, want := pl.ahead(len(r.out), *found, sb[:0], wb[:0])
	if len(steps) < 2 {
		return 0, nil
	}
	end := len(r.out) // the page's rows up to the statement being judged
	reads := make([]aheadRows, len(steps))
	ps := make([]driver.Piped, len(steps))
	parts := make([]*partition, len(steps))
	checks := make([]*int64, len(steps))
	for i, s := range steps {
		reads[i].r, checks[i] = r, &reads[i].check
		ps[i], parts[i] = p.named(q, topic, s, reads[i].read)
	}
	if err := p.server.checked(ctx, p.env, ps, parts, checks); err != nil {
		return 0, err
	}
	for i := range steps {
		pl.next(end, *found) // steps[i], as planned: the page read what ahead counted on
		got := reads[i].rows
		if got > 0 && reads[i].check != parts[i].filenode {
			return 0, errStale
		}
		end += got
		*found = got > 0
		if got != want[i] && want[i] >= 0 {
			r.out = r.out[:end] // the followers' limits were counted on want[i]
			return i + 1, nil
		}
	}
	return len(steps), nil
}

// aheadRows reads one statement of runAhead's pipeline into the page's
// rows, with its own check and count.
type aheadRows struct {
	r     *pageRows
	rows  int
	check int64
}

func (a *aheadRows) read(rows driver.RowSource) (err error) {
	before := len(a.r.out)
	a.r.out, err = driver.ScanMessageRows(rows, a.r.out, []any{&a.check}, nil)
	a.rows = len(a.r.out) - before
	return err
}

// named is the statement of step s that names its partitions (stepPartition:
// the partition; stepRun: the run's block), its rows read by read, and the
// partition whose check vouches for them.
func (p *Reader) named(q *pageQuery, topic int64, s pageStep, read func(driver.RowSource) error) (driver.Piped, *partition) {
	if s.kind == stepRun {
		block := runBlockOf(p.messages.parts, int(s.first), int(s.last))
		return driver.Piped{SQL: runSQL(q, block), Args: q.args(topic, s), Read: read}, &block
	}
	part := &p.messages.parts[s.first]
	return driver.Piped{SQL: sliceSQL(q, part), Args: q.args(topic, s), Read: read}, part
}

// pageRows are a page's rows as its statements read them, the first column
// of each (a partition's check) into check.
type pageRows struct {
	out   []model.TopicMessage
	check int64
}

func (r *pageRows) read(rows driver.RowSource) (err error) {
	r.out, err = driver.ScanMessageRows(rows, r.out, []any{&r.check}, nil)
	return err
}

// readChecked sends a statement that reads through partition part (a
// window's, or a run's block) with its check (v2Server.checked): rows read
// from a partition whose storage is not the catalog's (a reset) are
// errStale.
func (p *Reader) readChecked(ctx context.Context, read driver.Piped, part *partition, r *pageRows) error {
	before := len(r.out)
	if err := p.server.checked(ctx, p.env, []driver.Piped{read}, []*partition{part}, []*int64{&r.check}); err != nil {
		return err
	}
	if len(r.out) > before && r.check != part.filenode {
		return errStale
	}
	return nil
}

// checkCatalog is errStale when the partition (the first one when part < 0)
// was truncated or detached since the catalog was read.
func (p *Reader) checkCatalog(ctx context.Context, part int32) error {
	parts := p.messages.parts
	if len(parts) == 0 {
		return nil
	}
	if part < 0 {
		part = 0
	}
	var check int64
	read := func(rows driver.RowSource) error {
		for rows.Next() {
			if err := rows.Scan(&check); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	if err := p.env.Query(ctx, read, checkPartitionSQL, parts[part].name); err != nil {
		return err
	}
	if check != parts[part].filenode {
		return errStale
	}
	return nil
}

// pageShape is one of the page statements' condition sets (driver's sql.go).
type pageShape int

const (
	shapeSequence pageShape = iota
	shapeTimestamp
	shapeMixed
)

// text is the shape's conditions, the column its pages are ordered by and
// the parameter of their limit.
func (s pageShape) text() (conds, order, limit string) {
	switch s {
	case shapeSequence:
		return driver.PageSequenceRange, "sequence_number", "$5"
	case shapeTimestamp:
		return driver.PageTimestampRange, "consensus_timestamp", "$5"
	}
	return driver.PageBothRanges, "consensus_timestamp", "$8"
}

type sliceKey struct {
	shape pageShape
	dir   string // the page's direction (pageQuery.dir)
	table string // a partition's name, or "" for the parent bounded by parameters
	check string // the partition's check column (v2Server.checkColumn)
}

var sliceTexts driver.Texts[sliceKey]

// sliceSQL is the page statement of q's shape and direction on partition
// p (by its name), or, for the parent (wholeTable), on the parent bounded by two
// more parameters. Its first column is the partition's check (0 on the
// parent). The name was quoted when the catalog was read.
func sliceSQL(q *pageQuery, p *partition) string {
	shape := q.shape
	return sliceTexts.Of(sliceKey{shape: shape, dir: q.dir, table: p.name, check: p.check}, func() string {
		conds, by, limit := shape.text()
		check, bounds := p.check, p.within("consensus_timestamp")
		switch {
		case p.name != "":
		case shape == shapeMixed:
			check, bounds = "0::bigint", " AND consensus_timestamp >= $9 AND consensus_timestamp < $10"
		default:
			check, bounds = "0::bigint", " AND consensus_timestamp >= $6 AND consensus_timestamp < $7"
		}
		return "SELECT " + check + ", " + driver.MessageColumns + " FROM topic_message WHERE topic_id = $1" + conds + bounds +
			" ORDER BY " + by + " " + q.dir + " LIMIT " + limit
	})
}

// runKey names a run statement's text.
type runKey struct {
	shape  pageShape
	dir    string // the page's direction (pageQuery.dir)
	lo, hi int64  // the block's bounds (runBlockOf)
	check  string // the check column of the block's first partition
}

var runTexts driver.Texts[runKey]

// runSQL is the page statement of a run of windows, of q's shape and
// direction: one statement on the
// parent table bounded by the run's first lo and last hi, which its generic
// plan (SetPlanMode) prunes at executor start (Subplans Removed): a run
// over seven partitions opens those seven, in the page's order, and stops
// at the page's limit. The map vouches that the topic has no messages
// between the run's windows (a stretch it cannot vouch for is a window of
// its own, which ends a run), so the run's bounds read what its windows
// hold. A partition between windows that holds none of the topic's
// messages costs an empty index descent, far less than a statement per
// window would. Its first column is the check of the block's first
// partition, as a read of one partition returns its own: a reset truncates
// every partition, and a map learned before it is found out here as on a
// read of one partition. The parameters after the shape's own: the run's
// bounds. The rows are ordered as v1 orders them, by the page's column
// alone.
//
// It is also bounded by the constant bounds of a block of partitions that
// holds the run (runBlockOf; runOf ends a run at the block's edge), so that
// its generic plan holds those alone: bounded by parameters only, the plan
// would hold every partition, and every execution lock them all (most
// past the 16 a backend locks cheaply) before pruning.
func runSQL(q *pageQuery, block partition) string {
	shape := q.shape
	return runTexts.Of(runKey{shape: shape, dir: q.dir, lo: block.lo, hi: block.hi, check: block.check}, func() string {
		conds, by, limit := shape.text()
		n := 6
		if shape == shapeMixed {
			n = 9
		}
		arg := func(i int) string { return "$" + strconv.Itoa(n+i) }
		return "SELECT " + block.check + ", " + driver.MessageColumns +
			" FROM topic_message WHERE topic_id = $1" + conds +
			" AND consensus_timestamp >= " + arg(0) + " AND consensus_timestamp < " + arg(1) + block.within("consensus_timestamp") +
			" ORDER BY " + by + " " + q.dir + " LIMIT " + limit
	})
}

// A run statement is planned for a block of runBlock partitions, the blocks
// starting every runBlockStep: any run over at most runBlock-runBlockStep+1
// partitions (a run of maxRun windows in a row) is in one; a dozen texts
// of each page shape.
const (
	runBlock     = 24
	runBlockStep = 8
)

// runBlockOf is the block holding partitions first to last (indexes into
// parts) as its first partition widened to the block's bounds (the first
// partition's name and check stand for the block's), or no bounds at all
// (wholeTable) when none does.
func runBlockOf(parts []partition, first, last int) partition {
	if first < 0 || last >= len(parts) || !inOneBlock(first, last) {
		return *wholeTable()
	}
	start := first / runBlockStep * runBlockStep
	b := parts[start]
	b.hi = parts[min(start+runBlock, len(parts))-1].hi
	return b
}

// inOneBlock tells whether partitions first to last (indexes, first <=
// last) are in one block of runBlockOf.
func inOneBlock(first, last int) bool {
	return last < first/runBlockStep*runBlockStep+runBlock
}

// blockRun is how many of the first n partitions part(0), part(1), ...
// (indexes into the partitions, in either order) lie in one block of
// runBlockOf: up to the first that would take them out of it, or the first
// that is no partition (-1, a window on the parent table).
func blockRun(n int, part func(int) int32) int {
	first, last := math.MaxInt, -1
	for i := range n {
		p := int(part(i))
		if p < 0 || !inOneBlock(min(first, p), max(last, p)) {
			return i
		}
		first, last = min(first, p), max(last, p)
	}
	return n
}

// maxRun is how many windows one run statement reads together at most: it
// holds the locks of every partition (and index) it opens until it ends,
// and the server's lock table is shared by all its connections.
const maxRun = 16

// runOf is how many of the next windows one statement should read: those
// whose segments together hold fewer messages than the page still needs,
// each read alone otherwise, so that a sparse topic's page is not a
// statement per partition. Only windows of known size join a run.
func runOf(todo []window, remaining int64) int {
	// A run stays within one block (runBlockOf), so that its statement is
	// planned for that block and not for every partition; a run that would
	// leave it ends there.
	inBlock := blockRun(min(len(todo), maxRun), func(i int) int32 { return todo[i].part })
	n, rows := 0, int64(0)
	for n < inBlock && todo[n].rows >= 0 && rows < remaining {
		rows += int64(todo[n].rows)
		n++
	}
	if n < 2 {
		return 1
	}
	if rows < remaining && n < inBlock {
		n++ // the next window too, whatever its size: the page needs it
	}
	return n
}

// MessagesOfTopics is db.MessagesOfTopics (and MessagesOfTopic's one topic) on
// the v2 layout: a page per topic, all of one query made of f.
func (p *Reader) MessagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	out := make(map[model.EntityID][]model.TopicMessage, len(topics))
	q, ok := pageQueryOf(&f)
	if !ok {
		return out, nil
	}
	sorted := append([]model.EntityID(nil), topics...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i, t := range sorted {
		if i > 0 && t == sorted[i-1] {
			continue
		}
		rows, err := p.pageOf(ctx, int64(t), &q)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			out[t] = rows
		}
	}
	return out, nil
}
