package v2

import (
	"context"
	"slices"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// activityBoundsSQL: for each boundary, the first sequence number in
// [lo, hi) (-1 when there is none), lo the boundary and hi the end of the
// window of the topic's map that holds it. A statement on the parent
// table for the boundaries in one block of partitions (activityWindows
// sends one per block), prepared: its generic plan prunes every probe to
// the partition of its window at execution, which costs far less than a
// statement per partition (a hot topic's activity reads most partitions).
// The statement is bounded by its first lo and its last hi as well
// ($4, $5), which PostgreSQL prunes at executor start (a short window, the
// last day's activity say, opens its own partitions alone), and by the
// constant bounds of its block (blockOf, as a run statement is), so that
// its generic plan holds those partitions alone and does not lock every one.
// Its first column is the check of the block's first partition, as a read
// of one partition returns its own: a reset truncates every partition, and
// windows learned before it may leave out where the messages are now.
func activityBoundsSQL(block partition) string {
	return activityTexts.Of(activityKey{block.lo, block.hi, block.check}, func() string {
		return "SELECT " + block.check + ", b.i, coalesce((SELECT t.sequence_number FROM topic_message AS t WHERE t.topic_id = $1 " +
			"AND t.consensus_timestamp >= b.lo AND t.consensus_timestamp < b.hi " +
			"AND t.consensus_timestamp >= $4 AND t.consensus_timestamp < $5" + block.within("t.consensus_timestamp") +
			" ORDER BY t.consensus_timestamp LIMIT 1), -1) " +
			"FROM unnest($2::bigint[], $3::bigint[]) WITH ORDINALITY AS b(lo, hi, i)"
	})
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

// activityKey names an activity statement's text: its block's bounds and
// check column.
type activityKey struct {
	lo, hi int64
	check  string
}

var activityTexts driver.Texts[activityKey]

// Firsts is Activity on the v2 layout: the first sequence number at or
// after each boundary, read window by window from the oldest window that
// can hold it, stopping as soon as every boundary has one.
func (p *Reader) Firsts(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	return fresh(ctx, p, func(p *Reader) ([]int64, error) { return p.activityWindows(ctx, topic, bounds) })
}

// activityWindows plans each pass over the topic's windows
// (activityPlan.pass), runs its statements, and moves the boundaries their
// windows had no message after on to the next window (activityPlan.next),
// until every boundary has its first sequence number or no window is left;
// past the topic's last message the first is the last plus one (afterLast).
func (p *Reader) activityWindows(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	ws, err := p.topicWindows(ctx, int64(topic))
	if err != nil {
		return nil, err
	}
	pl := planActivity(ws, bounds)
	guess := p.guessLast(topic, ws, bounds)
	for stmts := pl.pass(); len(stmts) > 0; stmts = pl.pass() {
		if err := p.runActivity(ctx, topic, stmts, pl.firsts, guess); err != nil {
			return nil, err
		}
		guess = guess.sent()
		if pl.next() {
			p.forget(int64(topic)) // the map is behind: learn it again next time
		}
	}
	return pl.firsts, p.afterLast(ctx, topic, pl.firsts, guess)
}

// afterLast sets the firsts still unknown (-1), boundaries past the topic's
// last message, to the last sequence number plus one (0 for a topic without
// messages): the one guessLast read, else latest's.
func (p *Reader) afterLast(ctx context.Context, topic model.EntityID, firsts []int64, guess *lastGuess) error {
	next := int64(-1) // not read yet
	for i := range firsts {
		if firsts[i] >= 0 {
			continue
		}
		if next < 0 {
			last, err := guess.latest(slices.Max(firsts))
			if last == nil && err == nil {
				last, err = p.latest(ctx, topic)
			}
			if err != nil {
				return err
			}
			next = 0
			if last != nil {
				next = last.SequenceNumber + 1
			}
		}
		firsts[i] = next
	}
	return nil
}

// lastGuess is the first statement of the topic's latest page (latest: its
// newest window, by its partition's name), sent in the pipeline of an
// activity read's first pass when the read's last boundary lies in that
// window: then it is most likely past the topic's last message, whose
// sequence number the read needs (afterLast), and the statement would
// otherwise be a round trip of its own after the passes. What it found
// is the latest page as latest reads it: that page's first statement, the
// whole page when it found its one row. Found nothing, latest reads the page.
type lastGuess struct {
	piped   driver.Piped
	part    *partition
	rows    pageRows
	pending bool // not sent yet
}

// guessLast is the latest page's first statement when the last boundary
// lies in the topic's newest window and the page's plan (planPage) reads
// that window by its partition's name; else nil, nothing guessed.
func (p *Reader) guessLast(topic model.EntityID, ws []window, bounds []model.Timestamp) *lastGuess {
	if len(ws) == 0 || len(bounds) == 0 || int64(bounds[len(bounds)-1]) < ws[len(ws)-1].lo {
		return nil
	}
	f := latestFilter(topic)
	q, _ := pageQueryOf(&f)
	// A page of one row, newest first: its first statement is the newest
	// window's alone, whatever the windows before it (runOf).
	pl := planPage(&q, ws[len(ws)-1:], nil)
	s, ok := pl.next(0, false)
	if !ok || s.kind != stepPartition {
		return nil
	}
	g := &lastGuess{pending: true}
	g.rows.out = make([]model.TopicMessage, 0, 1)
	g.piped, g.part = p.named(&q, int64(topic), s, g.rows.read)
	return g
}

// sent is the guess once a pass's pipeline carried it: the same guess,
// no longer pending.
func (g *lastGuess) sent() *lastGuess {
	if g != nil {
		g.pending = false
	}
	return g
}

// latest is the topic's newest message as the guess found it, nil when it
// found none (or none was guessed), or one older than found, the newest
// message a pass found (a later pass, sent after the guess, found one
// written since: latest reads it again, so that no count comes out
// negative); errStale when it came from a partition whose storage is not
// the catalog's, as readChecked tells.
func (g *lastGuess) latest(found int64) (*model.TopicMessage, error) {
	if g == nil || len(g.rows.out) == 0 || g.rows.out[0].SequenceNumber < found {
		return nil, nil
	}
	if g.rows.check != g.part.filenode {
		return nil, errStale
	}
	return &g.rows.out[0], nil
}

// runActivity sends a pass's statements, pipelined, each on the block of
// partitions its windows fall in (blockOf), and the guess of the latest
// page while it is pending, and puts the first sequence numbers they find
// into firsts; errStale when a partition they read was truncated since the
// map was learned.
func (p *Reader) runActivity(ctx context.Context, topic model.EntityID, stmts []activityStatement, firsts []int64, guess *lastGuess) error {
	checks := make([]*int64, len(stmts), len(stmts)+1)
	blocks := make([]*partition, len(stmts), len(stmts)+1) // the partition each statement checks
	ps := make([]driver.Piped, len(stmts), len(stmts)+1)
	for n := range stmts {
		st := &stmts[n]
		block := p.messages.blockOf(st.lo, st.hi)
		checks[n], blocks[n] = new(int64), &block
		c := checks[n]
		ps[n] = driver.Piped{
			SQL:  activityBoundsSQL(block),
			Args: []any{int64(topic), driver.Int64Array(st.los), driver.Int64Array(st.his), st.lo, st.hi},
			Read: func(rows driver.RowSource) error {
				var k, seq int64
				for rows.Next() {
					if err := rows.Scan(c, &k, &seq); err != nil {
						return err
					}
					if seq >= 0 {
						firsts[st.bounds[k-1]] = seq
					}
				}
				return rows.Err()
			},
		}
	}
	if guess != nil && guess.pending {
		// its check is latest's to judge: set only when it found a row
		ps, blocks, checks = append(ps, guess.piped), append(blocks, guess.part), append(checks, &guess.rows.check)
	}
	if err := p.server.checked(ctx, p.env, ps, blocks, checks); err != nil {
		return err
	}
	for i, check := range checks[:len(stmts)] {
		if *check != blocks[i].filenode {
			return errStale
		}
	}
	return nil
}

// activityPlan is the state of an activity read: each boundary's first
// sequence number (-1 while unknown) and the window of the topic's map it
// is asked of next. Each boundary is asked of the window that holds it
// (the first that ends after it), all boundaries of a pass at once; one its
// window has no message after is asked of the next window in the next pass.
type activityPlan struct {
	ws     []window
	bounds []model.Timestamp
	firsts []int64
	at     []int // by boundary: its window in ws (len(ws): none left)
	asked  []int // the boundaries of the last pass
}

// activityStatement is one statement of a pass: the boundaries it asks
// (indexes into the plan's), each one's range within its window, and the
// range of them all.
type activityStatement struct {
	bounds   []int
	los, his []int64
	lo, hi   int64
}

func planActivity(ws []window, bounds []model.Timestamp) *activityPlan {
	pl := &activityPlan{ws: ws, bounds: bounds, firsts: make([]int64, len(bounds)), at: make([]int, len(bounds))}
	for i, b := range bounds {
		pl.firsts[i] = -1
		for pl.at[i] < len(ws) && ws[pl.at[i]].hi <= int64(b) {
			pl.at[i]++
		}
	}
	return pl
}

// pass is the next pass's statements (none: the read is done): the
// boundaries still unanswered that have a window left, cut into runs whose
// windows fall in one block of partitions (blockRun), a statement each; a
// window on the parent table is a statement of its own.
func (pl *activityPlan) pass() []activityStatement {
	pl.asked = pl.asked[:0]
	var los, his []int64
	for i, b := range pl.bounds {
		if pl.firsts[i] >= 0 || pl.at[i] >= len(pl.ws) {
			continue
		}
		w := pl.ws[pl.at[i]]
		pl.asked = append(pl.asked, i)
		los, his = append(los, max(int64(b), w.lo)), append(his, w.hi)
	}
	var out []activityStatement
	for start := 0; start < len(pl.asked); {
		end := start + max(1, blockRun(len(pl.asked)-start, func(i int) int32 { return pl.ws[pl.at[pl.asked[start+i]]].part }))
		glos, ghis := los[start:end], his[start:end]
		out = append(out, activityStatement{bounds: pl.asked[start:end], los: glos, his: ghis,
			lo: slices.Min(glos), hi: slices.Max(ghis)})
		start = end
	}
	return out
}

// next moves each boundary of the last pass that found no message on to
// its next window; it reports whether a boundary found its message in the
// map's tail window (whyTail), a sign that the map is behind the table.
func (pl *activityPlan) next() (behind bool) {
	for _, i := range pl.asked {
		if pl.firsts[i] < 0 {
			pl.at[i]++
		} else if pl.ws[pl.at[i]].why == whyTail {
			behind = true
		}
	}
	return behind
}

// LatestMessages is db.LatestMessages on the v2 layout, a topic at a time.
func (p *Reader) LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
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

// latest is the newest message of a topic (nil when it has none): the
// newest windows first. The range of sequence numbers, set though it admits
// every message, makes it the by-sequence page, which walks the (topic_id,
// sequence_number) index backward as v1's latestMessagesSQL does.
func (p *Reader) latest(ctx context.Context, topic model.EntityID) (*model.TopicMessage, error) {
	rows, err := p.messagesOfTopic(ctx, latestFilter(topic))
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// latestFilter is the latest page's filter: one message, newest first, by
// sequence number.
func latestFilter(topic model.EntityID) app.MessageFilter {
	every := model.Unbounded()
	return app.MessageFilter{TopicID: topic, Limit: 1, Order: model.Desc, SequenceNumber: &every}
}
