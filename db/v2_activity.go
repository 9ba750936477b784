package db

import (
	"context"
	"math"
	"slices"

	"mirrorql/app"
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
	return activityTexts.of(activityKey{block.lo, block.hi, block.check}, func() string {
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

var activityTexts texts[activityKey]

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
		// partitions, not all of them.
		var checks []*int64
		var blocks []*partition // the partition each statement checks
		var ps []piped
		for start := 0; start < len(asked); {
			// a window on the parent table is a statement of its own
			end := start + max(1, blockRun(len(asked)-start, func(i int) int32 { return ws[at[asked[start+i]]].part }))
			group, glos, ghis := asked[start:end], los[start:end], his[start:end]
			lo, hi := slices.Min(glos), slices.Max(ghis)
			c, block := new(int64), p.messages.blockOf(lo, hi)
			checks, blocks = append(checks, c), append(blocks, &block)
			ps = append(ps, piped{
				sql:  activityBoundsSQL(block),
				args: []any{int64(topic), int64Array(glos), int64Array(ghis), lo, hi},
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
		if err := p.server.checked(ctx, p.d, ps, blocks, checks); err != nil {
			return nil, err
		}
		for i, check := range checks {
			if *check != blocks[i].filenode {
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

// latest is the newest message of a topic (nil when it has none): the
// newest windows first. The condition on the sequence number, true of every
// message, makes it the by-sequence page, which walks the (topic_id,
// sequence_number) index backward as v1's latestMessagesSQL does.
func (p *v2Reader) latest(ctx context.Context, topic model.EntityID) (*model.TopicMessage, error) {
	rows, err := p.messagesOfTopic(ctx, app.MessageFilter{TopicID: topic, Limit: 1, Order: model.Desc,
		SequenceNumber: []model.Condition[int64]{{Op: model.OpGte, Value: math.MinInt64}}})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}
