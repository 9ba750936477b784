package db

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/model"
)

// checkSQL is what a page read in a partition also returns: its filenode.
// One other than the catalog's means the table was truncated (a reset)
// since the catalog and the topic maps were learned. The statements read the
// partition through the parent table (within), so a partition detached
// since is not read at all and needs no check of its own: the filenode comes
// from the server's cache of the catalog, without the scan of pg_class that
// the check once was (a fifth of the database's time on a read by sequence
// number).
func checkSQL(p *partition) string {
	return "(SELECT pg_relation_filenode(" + quoteLiteral(p.name) + "::regclass)::bigint)"
}

// within is the partition's bounds as conditions on a column: a statement
// on the parent table with them is planned for that partition alone
// (pruned when planned, generic plans too: the bounds are constants), and
// its plan holds the parent and that partition only. Read so rather than by
// the partition's name, a detached partition drops out of the answer as it
// does from v1's, and a statement that found its row needs no check.
func (p *partition) within(col string) string {
	s := ""
	if p.lo != math.MinInt64 {
		s += " AND " + col + " >= " + strconv.FormatInt(p.lo, 10)
	}
	if p.hi != math.MaxInt64 {
		s += " AND " + col + " < " + strconv.FormatInt(p.hi, 10)
	}
	return s
}

// partitionCheck is the check of the partition whose oid follows it.
const partitionCheck = "SELECT CASE WHEN c.relispartition THEN pg_relation_filenode(c.oid)::bigint ELSE -1 END " +
	"FROM pg_class AS c WHERE c.oid = "

// checkPartitionSQL is checkSQL for a partition named by a parameter: a read
// that found nothing in the partitions it named checks the catalog with it.
const checkPartitionSQL = "SELECT coalesce((" + partitionCheck + "to_regclass($1)), -1)"

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
}

var sliceTexts texts[sliceKey]

// sliceSQL is the page statement of a shape and order on partition p (by
// its name), or, for the parent (wholeTable), on the parent bounded by two
// more parameters. Its first column is the partition's check (0 on the
// parent). The name was quoted when the catalog was read.
func sliceSQL(shape pageShape, desc bool, p *partition) string {
	return sliceTexts.of(sliceKey{shape: shape, desc: desc, table: p.name}, func() string {
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

// errStale: the catalog no longer matches the database; read it again and
// answer anew.
var errStale = fmt.Errorf("partition catalog is stale")

// fresh runs read on the catalog, and again on a catalog read anew when
// the database changed under it (a partition truncated, detached or
// dropped): twice at most.
func fresh[T any](ctx context.Context, p *v2Reader, read func(*v2Reader) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := read(p)
		if (err == errStale || isUndefinedTable(err)) && attempt < 2 {
			p.d.counters.add(whyStale, 1)
			if p, err = p.relearn(ctx); err != nil {
				return v, err
			}
			continue
		}
		return v, err
	}
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
			part := parts[w.part]
			lastPart = int(w.part)
			err = p.d.query(ctx, func(rows rowSource) (err error) {
				out, err = scanMessageRows(rows, out, []any{&check}, nil)
				return err
			}, sliceSQL(shape, desc, &part), args...)
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
				p.d.counters.add(w.why, 1) // the map could not vouch for this stretch
			} else if len(out) > before {
				p.d.counters.add(whyTail, 1)
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
	lo, hi int64 // the block's bounds (blockOf)
}

var runTexts texts[runKey]

// runSQL is the page statement of a run of windows: one statement on the
// parent table bounded by the run's first lo and last hi, which its generic
// plan (setGenericPlans) prunes at executor start (Subplans Removed): a run
// over seven partitions opens those seven, in the page's order, and stops
// at the page's limit. The map vouches that the topic has no messages
// between the run's windows (a stretch it cannot vouch for is a window of
// its own, which ends a run), so the run's bounds read what its windows
// hold. Measured against each window read in turn by a LATERAL subquery
// over unnest of the windows' bounds, pruned at every probe (the shape
// before): pgbench, a topic's 14-partition page of 25, 12,216–13,571 →
// 15,605–16,278 statements/s; REST limit=25 on random sparse topics
// 4,166–4,886 → 5,152–5,562 requests/s. A partition between windows that
// holds none of the topic's messages costs an empty index descent: with
// two such partitions after each of 7 windows the two shapes were level.
// Against a statement per partition pipelined (the shape before that,
// with a catalog check each): a statement per window costs far more than
// a descent. Its first column is the check of one partition, the first
// window's storage, as a read of one partition returns it: a reset
// truncates every partition, and a map learned before it is found out here
// as on a read of one partition. The parameters after the shape's own:
// that partition's name, then the run's bounds. The rows are ordered as v1
// orders them, by the page's column alone.
//
// It is also bounded by the constant bounds of a block of partitions that
// holds the run (blockOf; runOf ends a run at the block's edge), so that
// its generic plan holds those alone: bounded by parameters only, the plan
// held every partition, and every execution locked them all (88, most
// past the 16 a backend locks cheaply) before pruning: a fifth of the
// database's rate on a sparse topic's page.
func runSQL(shape pageShape, desc bool, block partition) string {
	return runTexts.of(runKey{shape: shape, desc: desc, lo: block.lo, hi: block.hi}, func() string {
		conds, by, limit := shape.text()
		n := 6
		if shape == shapeMixed {
			n = 9
		}
		arg := func(i int) string { return "$" + strconv.Itoa(n+i) }
		return "SELECT (SELECT coalesce(pg_relation_filenode(to_regclass(" + arg(0) + ")), -1)::bigint), " + messageColumns +
			" FROM topic_message WHERE topic_id = $1" + conds +
			" AND consensus_timestamp >= " + arg(1) + " AND consensus_timestamp < " + arg(2) + block.within("consensus_timestamp") +
			" ORDER BY " + by + " " + direction(order(desc)) + " LIMIT " + limit
	})
}

// pageRun reads a run of windows in one statement (runSQL) and appends
// their rows to out in the page's order, up to the page's remaining rows.
// Rows read in a partition whose storage is not the catalog's (a reset) are
// errStale, as on a read of one partition; found tells whether it read any.
func (p *v2Reader) pageRun(ctx context.Context, run []window, parts []partition, shape pageShape, desc bool, args []any, out []model.TopicMessage) (_ []model.TopicMessage, found bool, err error) {
	lo, hi := run[0].lo, run[0].hi
	for _, w := range run[1:] {
		lo, hi = min(lo, w.lo), max(hi, w.hi)
	}
	first := &parts[run[0].part]
	args = append(args[:len(args):len(args)], first.name, lo, hi)
	var check int64
	before := len(out)
	read := func(rows rowSource) (err error) {
		out, err = scanMessageRows(rows, out, []any{&check}, nil)
		return err
	}
	if err := p.d.query(ctx, read, runSQL(shape, desc, (&partitionSet{parts: parts}).blockOf(lo, hi)), args...); err != nil {
		return out, false, err
	}
	if len(out) > before && check != first.filenode {
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
// parts) as a partition's bounds, or no bounds at all when none does.
func runBlockOf(parts []partition, first, last int) partition {
	if first < 0 || last >= len(parts) || !inOneBlock(first, last) {
		return *wholeTable()
	}
	start := first / runBlockStep * runBlockStep
	return partition{lo: parts[start].lo, hi: parts[min(start+runBlock, len(parts))-1].hi}
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
// has no partitions to prune again at each probe (the last days' activity:
// 1,594–1,621 → 1,922–1,950 requests/s, v1 2,418).
func (s *partitionSet) blockOf(lo, hi int64) partition {
	first, last := s.find(lo), s.find(hi-1)
	switch {
	case first < 0 || last < 0:
		return *wholeTable()
	case first == last:
		return partition{lo: s.parts[first].lo, hi: s.parts[first].hi}
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

// messageBySequence is the message of that one sequence number: read
// from the one partition the topic's map names for it; and where the map
// names none or several, or that read did not find exactly one row in an
// unchanged partition, the page of that sequence number decides (it learns,
// checks and falls back as every page does).
func (p *v2Reader) messageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	part, err := p.partitionOfSequence(ctx, topic, seq)
	if err != nil {
		return nil, err
	}
	if part >= 0 {
		pt := &p.messages.parts[part]
		ms := make([]model.TopicMessage, 0, 2)
		err := p.d.query(ctx, func(rows rowSource) (err error) {
			ms, err = scanMessageRows(rows, ms, nil, nil)
			return err
		}, bySequenceOneSQL(pt), int64(topic), seq)
		if err != nil {
			return nil, err
		}
		if len(ms) == 1 {
			return &ms[0], nil
		}
	}
	rows, err := p.page(ctx, app.MessageFilter{TopicID: topic, Limit: 2,
		SequenceNumber: []model.Condition[int64]{{Op: model.OpEq, Value: seq}}})
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// partitionOfSequence is the partition the topic's map names for the
// sequence number: the index of the one window by name that can hold it,
// -1 when none or several can.
func (p *v2Reader) partitionOfSequence(ctx context.Context, topic model.EntityID, seq int64) (int, error) {
	ws, err := p.topicWindows(ctx, int64(topic))
	if err != nil {
		return -1, err
	}
	part, n := -1, 0
	r := model.Range{Lo: seq, Hi: seq}
	for _, w := range ws {
		if w.overlaps(r, model.Range{Lo: math.MinInt64, Hi: math.MaxInt64}) {
			part, n = int(w.part), n+1
		}
	}
	if n != 1 {
		return -1, nil
	}
	return part, nil
}

// byTimestampV2SQL is messageByTimestampSQL within the partitions of
// transaction and topic_message that hold the time: the generic plan holds
// those two alone. It joins the tables, as v1's does; on Citus, where
// transaction is distributed by payer and may not be joined to
// topic_message, messageByTimestampCitus reads them apart instead.
func byTimestampV2SQL(tx, msg *partition) string {
	return byTimestampTexts.of([2]string{tx.name, msg.name}, func() string {
		return "SELECT " + messageColumnsM + " FROM transaction AS t JOIN topic_message AS m " +
			"ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp" + msg.within("m.consensus_timestamp") +
			" WHERE t.consensus_timestamp = $1" + tx.within("t.consensus_timestamp") + " AND t.result = 22 AND t.type = 27 LIMIT 2"
	})
}

var byTimestampTexts texts[[2]string] // the transaction and topic_message partitions

// messageByTimestamp is MessageByTimestamp on the v2 layout.
func (p *v2Reader) messageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	if p.l.Citus {
		return p.messageByTimestampCitus(ctx, ts)
	}
	return fresh(ctx, p, func(p *v2Reader) (*model.TopicMessage, error) {
		tx, msg := p.transactions.at(int64(ts)), p.messages.at(int64(ts))
		ms := make([]model.TopicMessage, 0, 2)
		read := func(rows rowSource) (err error) {
			ms, err = scanMessageRows(rows, ms, nil, nil)
			return err
		}
		var err error
		if tx.name == "" || msg.name == "" {
			// bounded by its constant: pruned when planned
			err = p.d.queryPlanned(ctx, read, byTimestampV2SQL(tx, msg), int64(ts))
		} else {
			err = p.d.query(ctx, read, byTimestampV2SQL(tx, msg), int64(ts))
		}
		switch {
		case err != nil:
			return nil, err
		case len(ms) != 1:
			return nil, ErrNotFound
		}
		return &ms[0], nil
	})
}

// messagesByTimestamp is MessagesByTimestamp on the v2 layout: a
// statement per timestamp within the partitions that hold it, pipelined; a
// time no partition holds, and every time on Citus (two statements each),
// are looked up one by one.
func (p *v2Reader) messagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	one := func(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
		return p.messageByTimestamp(ctx, ts)
	}
	if len(stamps) < 2 || p.l.Citus {
		return batchV2(ctx, stamps, one)
	}
	var rest, inPipe []model.Timestamp
	var ps []piped
	var results [][]model.TopicMessage
	seen := make(map[model.Timestamp]bool, len(stamps))
	for _, ts := range stamps {
		if seen[ts] {
			continue
		}
		seen[ts] = true
		tx, msg := p.transactions.at(int64(ts)), p.messages.at(int64(ts))
		if tx.name == "" || msg.name == "" {
			rest = append(rest, ts)
			continue
		}
		i := len(ps)
		inPipe = append(inPipe, ts)
		results = append(results, make([]model.TopicMessage, 0, 1))
		ps = append(ps, piped{sql: byTimestampV2SQL(tx, msg), args: []any{int64(ts)},
			read: func(rows rowSource) (err error) {
				results[i], err = scanMessageRows(rows, results[i], nil, nil)
				return err
			}})
	}
	if err := p.d.pipeline(ctx, ps); err != nil {
		return nil, err
	}
	out := make(map[model.Timestamp]*model.TopicMessage, len(stamps))
	for i, ts := range inPipe {
		if ms := results[i]; len(ms) == 1 {
			out[ts] = &ms[0]
		}
	}
	more, err := batchV2(ctx, rest, one)
	if err != nil {
		return nil, err
	}
	for k, m := range more {
		out[k] = m
	}
	return out, nil
}

// submitTopicV2SQL: the topic of the successful submit at a time, read
// apart (transaction is distributed by payer on Citus, so this statement
// goes to every shard, as the mirror node's own does).
func submitTopicV2SQL(tx *partition) string {
	table := tx.name
	if table == "" {
		table = "transaction"
	}
	return "SELECT entity_id FROM " + table + " WHERE consensus_timestamp = $1 AND result = 22 AND type = 27 LIMIT 2"
}

// messageByTimestampCitus is MessageByTimestamp as the mirror node's REST
// reads it on Citus: the submit transaction first, then the message of its
// topic, a statement routed to that topic's shard.
func (p *v2Reader) messageByTimestampCitus(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	var topics []int64
	read := func(rows rowSource) error {
		for rows.Next() {
			var t pgtype.Int8
			if err := rows.Scan(&t); err != nil {
				return err
			}
			topics = append(topics, t.Int64)
		}
		return rows.Err()
	}
	tx := p.transactions.at(int64(ts))
	var err error
	if tx.name == "" {
		err = p.d.queryPlanned(ctx, read, submitTopicV2SQL(tx), int64(ts))
	} else {
		err = p.d.query(ctx, read, submitTopicV2SQL(tx), int64(ts))
	}
	if err != nil {
		return nil, err
	}
	if len(topics) != 1 {
		return nil, ErrNotFound
	}
	rows, err := p.page(ctx, app.MessageFilter{TopicID: model.EntityID(topics[0]), Limit: 2,
		Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpEq, Value: ts}}})
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// latest is the newest message of a topic (nil when it has none): the
// newest windows first. The condition on the sequence number, true of every
// message, makes it the by-sequence page, which walks the (topic_id,
// sequence_number) index backward as v1's latestMessagesSQL does.
func (p *v2Reader) latest(ctx context.Context, topic model.EntityID) (*model.TopicMessage, error) {
	rows, err := p.page(ctx, app.MessageFilter{TopicID: topic, Limit: 1, Order: model.Desc,
		SequenceNumber: []model.Condition[int64]{{Op: model.OpGte, Value: math.MinInt64}}})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// activityBoundsSQL: for each boundary, the first sequence number in
// [lo, hi) (-1 when there is none), lo the boundary and hi the end of the
// window of the topic's map that holds it. A statement on the parent
// table for the boundaries in one block of partitions (activityWindows
// sends one per block), prepared: its generic plan prunes every probe to
// the partition of its window at execution, and opening the partitions
// once costs a few microseconds each, where a statement per partition
// cost some thirty: the hot topic's activity(96) reads 87 partitions.
// The statement is bounded by its first lo and its last hi as well
// ($5, $6), which PostgreSQL prunes at executor start (a short window, the
// last day's activity say, opens its own partitions alone), and by the
// constant bounds of its block (blockOf, as a run statement is), so that
// its generic plan holds those partitions alone and does not lock every one.
// Its first column is the check of the first partition ($4), as a read of
// one partition returns it: a reset truncates every partition, and windows
// learned before it may leave out where the messages are now.
func activityBoundsSQL(block partition) string {
	return activityTexts.of([2]int64{block.lo, block.hi}, func() string {
		return "SELECT (" + partitionCheck + "to_regclass($4)), b.i, coalesce((SELECT t.sequence_number FROM topic_message AS t WHERE t.topic_id = $1 " +
			"AND t.consensus_timestamp >= b.lo AND t.consensus_timestamp < b.hi " +
			"AND t.consensus_timestamp >= $5 AND t.consensus_timestamp < $6" + block.within("t.consensus_timestamp") +
			" ORDER BY t.consensus_timestamp LIMIT 1), -1) " +
			"FROM unnest($2::bigint[], $3::bigint[]) WITH ORDINALITY AS b(lo, hi, i)"
	})
}

var activityTexts texts[[2]int64] // the block's bounds → activityBoundsSQL

// firsts is Activity on the v2 layout: the first sequence number at or
// after each boundary, read window by window from the oldest window that
// can hold it, stopping as soon as every boundary has one.
func (p *v2Reader) firsts(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	return fresh(ctx, p, func(p *v2Reader) ([]int64, error) { return p.activityWindows(ctx, topic, bounds) })
}

func (p *v2Reader) activityWindows(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	ws, err := p.topicWindows(ctx, int64(topic))
	if err != nil {
		return nil, err
	}
	firsts := make([]int64, len(bounds))
	for i := range firsts {
		firsts[i] = -1
	}
	// Each boundary is asked of the window that holds it (the first that
	// ends after it), all boundaries in one statement. A boundary its
	// window has no message after is asked of the next window in the next
	// pass, until every one has an answer or no window is left.
	at := make([]int, len(bounds))
	for i, b := range bounds {
		for at[i] < len(ws) && ws[at[i]].hi <= int64(b) {
			at[i]++
		}
	}
	// the partition whose check each pass returns (the table itself, not a
	// partition, where there are none: -1)
	checkName, checkWant := "topic_message", int64(-1)
	if parts := p.messages.parts; len(parts) > 0 {
		checkName, checkWant = parts[0].name, parts[0].filenode
	}
	asked := make([]int, 0, len(bounds)) // the boundaries of a pass
	los, his := make([]int64, 0, len(bounds)), make([]int64, 0, len(bounds))
	for {
		asked, los, his = asked[:0], los[:0], his[:0]
		for i, b := range bounds {
			if firsts[i] >= 0 || at[i] >= len(ws) {
				continue
			}
			w := ws[at[i]]
			asked = append(asked, i)
			los, his = append(los, max(int64(b), w.lo)), append(his, w.hi)
		}
		if len(asked) == 0 {
			break
		}
		// A statement per block of partitions (inOneBlock) that the pass's
		// windows fall in, pipelined: each is planned for its block alone,
		// and a probe's re-pruning at execution walks that block's
		// partitions, not all of them (pgbench, the hot topic's whole
		// history in 96 boundaries over 87 partitions, 16 clients: one
		// statement 1,479 statements/s, four 1,707; the service side by
		// side 1,021 / 1,069 / 992 → 1,195 / 1,301 / 1,199 requests/s).
		var checks []*int64
		var ps []piped
		for start := 0; start < len(asked); {
			// a window on the parent table is a statement of its own
			end := start + max(1, blockRun(len(asked)-start, func(i int) int32 { return ws[at[asked[start+i]]].part }))
			group, glos, ghis := asked[start:end], los[start:end], his[start:end]
			lo, hi := slices.Min(glos), slices.Max(ghis)
			c := new(int64)
			checks = append(checks, c)
			ps = append(ps, piped{
				sql:  activityBoundsSQL(p.messages.blockOf(lo, hi)),
				args: []any{int64(topic), int64Array(glos), int64Array(ghis), checkName, lo, hi},
				read: func(rows rowSource) error {
					var k, seq int64
					for rows.Next() {
						if err := rows.Scan(c, &k, &seq); err != nil {
							return err
						}
						if seq >= 0 {
							firsts[group[k-1]] = seq
						}
					}
					return rows.Err()
				},
			})
			start = end
		}
		if err := p.d.pipeline(ctx, ps); err != nil {
			return nil, err
		}
		for _, check := range checks {
			if *check != checkWant {
				return nil, errStale
			}
		}
		forget := false
		for _, i := range asked {
			if firsts[i] < 0 {
				at[i]++
			} else if ws[at[i]].why == whyTail {
				forget = true // the map is behind: learn it again next time
			}
		}
		if forget {
			p.forget(int64(topic))
		}
	}
	var last *model.TopicMessage
	for i := range firsts {
		if firsts[i] >= 0 {
			continue
		}
		// Past the last message: the first at or after is the last plus one.
		if last == nil {
			if last, err = p.latest(ctx, topic); err != nil {
				return nil, err
			}
			if last == nil {
				last = &model.TopicMessage{SequenceNumber: -1}
			}
		}
		firsts[i] = last.SequenceNumber + 1
	}
	return firsts, nil
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

// bySequenceBatchSQL is messagesBySequenceSQL within one partition.
func bySequenceBatchSQL(part *partition) string { return batchTexts.of(part) }

var batchTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + messageColumnsM + " FROM unnest($1::bigint[], $2::bigint[]) AS k(topic_id, sequence_number) " +
		"JOIN topic_message AS m ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number" + part.within("m.consensus_timestamp")
}}

// bySequenceTopicSQL is bySequenceBatchSQL for one topic's sequence numbers:
// on Citus a statement routed to that topic's shard.
func bySequenceTopicSQL(part *partition) string { return topicBatchTexts.of(part) }

var topicBatchTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + messageColumnsM + " FROM topic_message" +
		" AS m WHERE m.topic_id = $1 AND m.sequence_number = ANY ($2::bigint[])" + part.within("m.consensus_timestamp")
}}

// bySequenceOneSQL is messageBySequenceSQL within one partition: a row it
// finds is the answer, whatever the map (learned before a reset, say) says.
func bySequenceOneSQL(part *partition) string { return oneTexts.of(part) }

var oneTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + messageColumns + " FROM topic_message" +
		" WHERE topic_id = $1 AND sequence_number = $2" + part.within("consensus_timestamp")
}}

// partitionTexts are the texts of one statement, one for each partition.
type partitionTexts struct {
	texts[string] // by the partition's name
	make          func(*partition) string
}

// of is the text for part.
func (c *partitionTexts) of(part *partition) string {
	return c.texts.of(part.name, func() string { return c.make(part) })
}

// messagesBySequence is MessagesBySequence on the v2 layout: the keys
// whose topic's map names one partition for them are looked up a statement
// per partition (per partition and topic on Citus: a statement over several
// topics would go to every shard), the statements pipelined; the others,
// and any a statement did not find exactly once, one by one (their own
// lookups learn, check and fall back as a page does).
func (p *v2Reader) messagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	one := func(ctx context.Context, k app.TopicSequence) (*model.TopicMessage, error) {
		return p.messageBySequence(ctx, k.TopicID, k.SequenceNumber)
	}
	if len(keys) < 2 {
		return batchV2(ctx, keys, one)
	}
	type group struct {
		part  int
		topic model.EntityID // on Citus; 0 otherwise
	}
	groups := map[group][]app.TopicSequence{}
	var order []group
	var rest []app.TopicSequence
	for _, k := range keys {
		part, err := p.partitionOfSequence(ctx, k.TopicID, k.SequenceNumber)
		if err != nil {
			return nil, err
		}
		if part < 0 {
			rest = append(rest, k)
			continue
		}
		g := group{part: part}
		if p.l.Citus {
			g.topic = k.TopicID
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], k)
	}
	out := make(map[app.TopicSequence]*model.TopicMessage, len(keys))
	results := make([][]model.TopicMessage, len(order))
	ps := make([]piped, len(order))
	for i, g := range order {
		ks := groups[g]
		topics, seqs := make([]int64, len(ks)), make([]int64, len(ks))
		for j, k := range ks {
			topics[j], seqs[j] = int64(k.TopicID), k.SequenceNumber
		}
		part := &p.messages.parts[g.part]
		results[i] = make([]model.TopicMessage, 0, len(ks))
		sql, args := bySequenceBatchSQL(part), []any{int64Array(topics), int64Array(seqs)}
		switch {
		case len(ks) == 1:
			// most groups when the keys are spread over many partitions: an
			// index probe, without unnest's join and array parameters
			sql, args = bySequenceOneSQL(part), []any{topics[0], seqs[0]}
		case p.l.Citus:
			sql, args = bySequenceTopicSQL(part), []any{int64(g.topic), int64Array(seqs)}
		}
		ps[i] = piped{sql: sql, args: args,
			read: func(rs rowSource) (err error) {
				results[i], err = scanMessageRows(rs, results[i], nil, nil)
				return err
			}}
	}
	if err := p.d.pipeline(ctx, ps); err != nil {
		return nil, err
	}
	for i, g := range order {
		rows := results[i]
		found := make(map[app.TopicSequence]int, len(rows))
		for r := range rows {
			found[app.TopicSequence{TopicID: rows[r].TopicID, SequenceNumber: rows[r].SequenceNumber}]++
		}
		for r := range rows {
			k := app.TopicSequence{TopicID: rows[r].TopicID, SequenceNumber: rows[r].SequenceNumber}
			if found[k] == 1 {
				out[k] = &rows[r]
			}
		}
		for _, k := range groups[g] {
			if _, ok := out[k]; !ok {
				rest = append(rest, k) // not found, or twice: the lookup of its own decides
			}
		}
	}
	more, err := batchV2(ctx, rest, one)
	if err != nil {
		return nil, err
	}
	for k, m := range more {
		out[k] = m
	}
	return out, nil
}

// batchV2 runs one by one what v1 sends as a batch statement over
// unnest(…): on Citus a multi-shard statement, and on partitions each key
// wants partitions of its own.
func batchV2[K comparable](ctx context.Context, keys []K, one func(context.Context, K) (*model.TopicMessage, error)) (map[K]*model.TopicMessage, error) {
	out := make(map[K]*model.TopicMessage, len(keys))
	for _, k := range keys {
		if _, done := out[k]; done {
			continue
		}
		m, err := one(ctx, k)
		if err == ErrNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = m
	}
	return out, nil
}

// latestMessages is LatestMessages on the v2 layout, a topic at a time.
func (p *v2Reader) latestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
	out := make(map[model.EntityID]*model.TopicMessage, len(topics))
	for _, t := range topics {
		m, err := p.latest(ctx, t)
		if err != nil {
			return nil, err
		}
		if m != nil {
			out[t] = m
		}
	}
	return out, nil
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
