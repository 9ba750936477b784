package db

import (
	"context"
	"math"
	"sort"
	"strconv"

	"mirrorql/app"
	"mirrorql/model"
)

// pageShape is one of the page statements' condition sets (message_pages.go).
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
		return pageSequenceRange, "sequence_number", "$5"
	case shapeTimestamp:
		return pageTimestampRange, "consensus_timestamp", "$5"
	}
	return pageBothRanges, "consensus_timestamp", "$8"
}

// order is a page's direction as a sort order.
func order(desc bool) model.Order {
	if desc {
		return model.Desc
	}
	return model.Asc
}

type sliceKey struct {
	shape pageShape
	desc  bool
	table string // a partition's name, or "" for the parent bounded by parameters
	check string // the partition's check column (v2Server.checkColumn)
}

var sliceTexts texts[sliceKey]

// sliceSQL is the page statement of a shape and order on partition p (by
// its name), or, for the parent (wholeTable), on the parent bounded by two
// more parameters. Its first column is the partition's check (0 on the
// parent). The name was quoted when the catalog was read.
func sliceSQL(shape pageShape, desc bool, p *partition) string {
	return sliceTexts.of(sliceKey{shape: shape, desc: desc, table: p.name, check: p.check}, func() string {
		conds, by, limit := shape.text()
		check, bounds := p.check, p.within("consensus_timestamp")
		switch {
		case p.name != "":
		case shape == shapeMixed:
			check, bounds = "0::bigint", " AND consensus_timestamp >= $9 AND consensus_timestamp < $10"
		default:
			check, bounds = "0::bigint", " AND consensus_timestamp >= $6 AND consensus_timestamp < $7"
		}
		return "SELECT " + check + ", " + messageColumns + " FROM topic_message WHERE topic_id = $1" + conds + bounds +
			" ORDER BY " + by + " " + direction(order(desc)) + " LIMIT " + limit
	})
}

// page is MessagesOfTopic on the v2 layout.
func (p *v2Reader) page(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	return fresh(ctx, p, func(p *v2Reader) ([]model.TopicMessage, error) { return p.pageWindows(ctx, f) })
}

func (p *v2Reader) pageWindows(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	seq, ts, ok := filterRanges(&f)
	if !ok || f.Limit <= 0 {
		return []model.TopicMessage{}, nil
	}
	shape := shapeMixed
	switch {
	case filterBySequence(&f):
		shape = shapeSequence
	case len(f.SequenceNumber) == 0:
		shape = shapeTimestamp
	}
	ws, err := p.topicWindows(ctx, int64(f.TopicID))
	if err != nil {
		return nil, err
	}
	parts := p.messages.parts
	desc := f.Order == model.Desc
	out := make([]model.TopicMessage, 0, min(f.Limit, 128))
	checked := len(ws) == 1 && ws[0].why == whyEmpty // one window over everything needs no map to be right
	lastPart := -1
	// the windows that may hold the page's rows, in the page's order (most
	// pages have one or two: on the stack)
	var buf [8]window
	todo := buf[:0]
	for n := range ws {
		w := ws[n]
		if desc {
			w = ws[len(ws)-1-n]
		}
		if w.overlaps(seq, ts) {
			todo = append(todo, w)
		}
	}
	for len(todo) > 0 {
		remaining := int64(f.Limit - len(out))
		if remaining <= 0 {
			break
		}
		w, run := todo[0], runOf(todo, remaining)
		args := make([]any, 0, 10)
		args = append(args, int64(f.TopicID))
		switch shape {
		case shapeSequence:
			args = append(args, seq.Lo, seq.Hi, notArray(seq), remaining)
		case shapeTimestamp:
			args = append(args, ts.Lo, ts.Hi, notArray(ts), remaining)
		default:
			args = append(args, seq.Lo, seq.Hi, notArray(seq), ts.Lo, ts.Hi, notArray(ts), remaining)
		}
		switch {
		case run > 1:
			// Several windows too small to fill the page alone (a sparse
			// topic): one statement for them all (runSQL).
			var found bool
			if out, found, err = p.pageRun(ctx, todo[:run], parts, shape, desc, args, out); err != nil {
				return nil, err
			}
			if len(out) > f.Limit {
				out = out[:f.Limit]
			}
			checked = checked || found
			todo = todo[run:]
			continue
		case w.part >= 0:
			todo = todo[1:]
			var check int64
			before := len(out)
			part := &parts[w.part]
			lastPart = int(w.part)
			read := piped{sql: sliceSQL(shape, desc, part), args: args, read: func(rows rowSource) (err error) {
				out, err = scanMessageRows(rows, out, []any{&check}, nil)
				return err
			}}
			err = p.server.checked(ctx, p.d, []piped{read}, []*partition{part}, []*int64{&check})
			if err == nil && len(out) > before {
				if check != part.filenode {
					return nil, errStale
				}
				checked = true
			}
		default:
			todo = todo[1:]
			before := len(out)
			args = append(args, w.lo, w.hi)
			err = p.d.queryPlanned(ctx, func(rows rowSource) (err error) {
				out, err = scanMessageRows(rows, out, []any{new(int64)}, nil)
				return err
			}, sliceSQL(shape, desc, wholeTable()), args...)
			if w.why != whyTail {
				p.state.fallbacks.add(w.why, 1) // the map could not vouch for this stretch
			} else if len(out) > before {
				p.state.fallbacks.add(whyTail, 1)
				p.forget(int64(f.TopicID)) // the map is behind: learn it again next time
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if !checked && len(out) < f.Limit {
		// Nothing read by a partition's name vouched that the map is
		// current, and an incomplete page may be missing what a stale
		// map sent nowhere: check the catalog against the database.
		if err := p.checkCatalog(ctx, lastPart); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runKey names a run statement's text.
type runKey struct {
	shape  pageShape
	desc   bool
	lo, hi int64  // the block's bounds (blockOf)
	check  string // the check column of the block's first partition
}

var runTexts texts[runKey]

// runSQL is the page statement of a run of windows: one statement on the
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
// holds the run (blockOf; runOf ends a run at the block's edge), so that
// its generic plan holds those alone: bounded by parameters only, the plan
// would hold every partition, and every execution lock them all (most
// past the 16 a backend locks cheaply) before pruning.
func runSQL(shape pageShape, desc bool, block partition) string {
	return runTexts.of(runKey{shape: shape, desc: desc, lo: block.lo, hi: block.hi, check: block.check}, func() string {
		conds, by, limit := shape.text()
		n := 6
		if shape == shapeMixed {
			n = 9
		}
		arg := func(i int) string { return "$" + strconv.Itoa(n+i) }
		return "SELECT " + block.check + ", " + messageColumns +
			" FROM topic_message WHERE topic_id = $1" + conds +
			" AND consensus_timestamp >= " + arg(0) + " AND consensus_timestamp < " + arg(1) + block.within("consensus_timestamp") +
			" ORDER BY " + by + " " + direction(order(desc)) + " LIMIT " + limit
	})
}

// pageRun reads a run of windows in one statement (runSQL) and appends
// their rows to out in the page's order, up to the page's remaining rows.
// Rows read from a block whose first partition's storage is not the
// catalog's (a reset) are errStale, as on a read of one partition; found
// tells whether it read any.
func (p *v2Reader) pageRun(ctx context.Context, run []window, parts []partition, shape pageShape, desc bool, args []any, out []model.TopicMessage) (_ []model.TopicMessage, found bool, err error) {
	lo, hi := run[0].lo, run[0].hi
	for _, w := range run[1:] {
		lo, hi = min(lo, w.lo), max(hi, w.hi)
	}
	block := (&partitionSet{parts: parts}).blockOf(lo, hi)
	args = append(args[:len(args):len(args)], lo, hi)
	var check int64
	before := len(out)
	read := piped{sql: runSQL(shape, desc, block), args: args, read: func(rows rowSource) (err error) {
		out, err = scanMessageRows(rows, out, []any{&check}, nil)
		return err
	}}
	if err := p.server.checked(ctx, p.d, []piped{read}, []*partition{&block}, []*int64{&check}); err != nil {
		return out, false, err
	}
	if len(out) > before && check != block.filenode {
		return out, false, errStale
	}
	return out, len(out) > before, nil
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

// blockOf is runBlockOf for the partitions holding [lo, hi), or that one
// partition's bounds when one holds it all: a plan of that partition alone
// has no partitions to prune again at each probe (the last days'
// activity, say).
func (s *partitionSet) blockOf(lo, hi int64) partition {
	first, last := s.find(lo), s.find(hi-1)
	switch {
	case first < 0 || last < 0:
		return *wholeTable()
	case first == last:
		return s.parts[first]
	}
	return runBlockOf(s.parts, first, last)
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

// checkCatalog is errStale when the partition (the first one when part < 0)
// was truncated or detached since the catalog was read.
func (p *v2Reader) checkCatalog(ctx context.Context, part int) error {
	parts := p.messages.parts
	if len(parts) == 0 {
		return nil
	}
	if part < 0 {
		part = 0
	}
	var check int64
	read := func(rows rowSource) error {
		for rows.Next() {
			if err := rows.Scan(&check); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	if err := p.d.query(ctx, read, checkPartitionSQL, parts[part].name); err != nil {
		return err
	}
	if check != parts[part].filenode {
		return errStale
	}
	return nil
}

// chunks is the statement part of ChunksOf on the v2 layout: the
// windows of sequence numbers of each topic, merged where they overlap or
// meet (the windows of a page's messages mostly do), each read as one page
// of its topic in sequence order; rows carry the (1-based) windows they were
// asked for, a row in several windows once for each.
func (p *v2Reader) chunks(ctx context.Context, topics, los, his []int64) (rows []model.TopicMessage, of []int64, err error) {
	order := make([]int, len(topics))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if topics[x] != topics[y] {
			return topics[x] < topics[y]
		}
		return los[x] < los[y]
	})
	for start := 0; start < len(order); {
		first := order[start]
		topic, lo, hi := topics[first], los[first], his[first]
		end := start + 1
		for end < len(order) && topics[order[end]] == topic && los[order[end]] <= hi+1 {
			hi = max(hi, his[order[end]])
			end++
		}
		page, err := p.page(ctx, app.MessageFilter{TopicID: model.EntityID(topic), Limit: int(min(hi-lo+1, math.MaxInt32)),
			SequenceNumber: []model.Condition[int64]{{Op: model.OpGte, Value: lo}, {Op: model.OpLte, Value: hi}}})
		if err != nil {
			return nil, nil, err
		}
		for _, m := range page {
			if m.ChunkNum == nil {
				continue
			}
			for _, k := range order[start:end] {
				if los[k] <= m.SequenceNumber && m.SequenceNumber <= his[k] {
					rows, of = append(rows, m), append(of, int64(k+1))
				}
			}
		}
		start = end
	}
	return rows, of, nil
}

// messagesOfTopics is MessagesOfTopics on the v2 layout: a page per topic.
func (p *v2Reader) messagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	out := make(map[model.EntityID][]model.TopicMessage, len(topics))
	sorted := append([]model.EntityID(nil), topics...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i, t := range sorted {
		if i > 0 && t == sorted[i-1] {
			continue
		}
		f.TopicID = t
		rows, err := p.page(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			out[t] = rows
		}
	}
	return out, nil
}
