// Package v1 is the query layer's reader of the mirror node's v1 layout
// (db/internal/driver tells what a reader is).
package v1

import (
	"context"
	"fmt"
	"slices"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// Reader is the reader of the mirror node's v1 layout: plain tables, each
// question one statement, a batch one statement over unnest(…), its
// statements beside it in statements.go. It is also the reader before
// the layout is learned: on either layout its answers are right.
type Reader struct {
	env *driver.Env
	l   driver.Layout
}

// New is the reader of layout l (db's newReader; db's reader before the
// layout is learned, of the zero layout).
func New(env *driver.Env, l driver.Layout) *Reader { return &Reader{env: env, l: l} }

// Next is r while the layout is the same.
func (r *Reader) Next(ctx context.Context, l driver.Layout) (driver.Reader, error) {
	if l == r.l {
		return r, nil
	}
	return r.env.Choose(ctx, l, r)
}

func (r *Reader) LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
	rows := make([]model.TopicMessage, 0, len(topics))
	read := func(r driver.RowSource) (err error) { rows, err = driver.ScanMessages(r, rows); return err }
	if err := r.env.Query(ctx, read, latestMessagesSQL, driver.Int64Array(topics)); err != nil {
		return nil, err
	}
	out := make(map[model.EntityID]*model.TopicMessage, len(rows))
	for i := range rows {
		out[rows[i].TopicID] = &rows[i]
	}
	return out, nil
}

func (r *Reader) Firsts(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	firsts := make([]int64, 0, len(bounds))
	read := func(rows driver.RowSource) error {
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				return err
			}
			firsts = append(firsts, seq)
		}
		return rows.Err()
	}
	// arrays travel as text literals (Int64Array)
	if err := r.env.Query(ctx, read, activitySQL, int64(topic), driver.Int64Array(bounds)); err != nil {
		return nil, err
	}
	return firsts, nil
}

func (r *Reader) Chunks(ctx context.Context, topics, los, his []int64) ([]model.TopicMessage, []int64, error) {
	var (
		rows   = make([]model.TopicMessage, 0, 2*len(topics))
		window int64
		of     = make([]int64, 0, 2*len(topics)) // the window of each row
	)
	read := func(rs driver.RowSource) (err error) {
		rows, err = driver.ScanMessageRows(rs, rows, []any{&window}, func() { of = append(of, window) })
		return err
	}
	if err := r.env.Query(ctx, read, chunksSQL, driver.Int64Array(topics), driver.Int64Array(los), driver.Int64Array(his)); err != nil {
		return nil, nil, err
	}
	return rows, of, nil
}

// LivePoll sends livePollSQL. The topics travel as an array literal (text),
// as the point lookups' keys do: the EXPLAIN tests write the statement's
// values as literals.
func (r *Reader) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, lp *driver.LivePollRows) error {
	return r.env.Query(ctx, lp.Read, livePollSQL, int64(after), driver.Int64Array(topics), int64(limit))
}

func (r *Reader) MessagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	out := make(map[model.EntityID][]model.TopicMessage, len(topics))
	if len(topics) == 0 {
		return out, nil
	}
	// Room for the pages, up to a size beyond which a topic's page is
	// rarely full (the live streams' reads ask for a thousand rows and
	// mostly find a few): such pages grow as their rows come.
	rows := make([]model.TopicMessage, 0, min(max(f.Limit, 0)*len(topics), 128*len(topics), 1024))
	read := func(rs driver.RowSource) (err error) { rows, err = driver.ScanMessages(rs, rows); return err }
	if err := r.messagePage(ctx, f, topics, read); err != nil {
		return nil, err
	}
	groupByTopic(out, rows)
	return out, nil
}

// groupByTopic puts each topic's rows into out: a run of one topic's rows is
// handed over as a slice of rows, with no copy (the statement returns each
// topic's page in one run); a topic met again is appended to a copy.
func groupByTopic(out map[model.EntityID][]model.TopicMessage, rows []model.TopicMessage) {
	for i := 0; i < len(rows); {
		id, j := rows[i].TopicID, i+1
		for j < len(rows) && rows[j].TopicID == id {
			j++
		}
		if prev, seen := out[id]; seen {
			out[id] = append(prev[:len(prev):len(prev)], rows[i:j]...)
		} else {
			out[id] = rows[i:j:j]
		}
		i = j
	}
}

// messagePage sends the statement of f's page, for f.TopicID when topics is
// nil, else for each of topics, and hands its rows to read. One topic of
// topics (a lone topic's page in GraphQL) is asked with its own page's
// statement, which costs less to run and to read than the array's.
func (r *Reader) messagePage(ctx context.Context, f app.MessageFilter, topics []model.EntityID, read func(driver.RowSource) error) error {
	seq, ts := driver.FilterRanges(&f)
	if len(topics) == 1 {
		f.TopicID, topics = topics[0], nil
	}
	bySeq, byTs, mixed := pageStatements(topics != nil, f.Order)
	var topic any = int64(f.TopicID)
	if topics != nil {
		topic = driver.Int64Array(topics)
	}
	limit := int64(f.Limit)
	switch {
	case driver.FilterBySequence(&f):
		return r.env.Query(ctx, read, bySeq, topic, seq.Lo, seq.Hi, driver.NotArray(seq), limit)
	case driver.FilterByTimestamp(&f):
		return r.env.Query(ctx, read, byTs, topic, ts.Lo, ts.Hi, driver.NotArray(ts), limit)
	}
	return r.env.QueryPlanned(ctx, read, mixed, topic, seq.Lo, seq.Hi, driver.NotArray(seq), ts.Lo, ts.Hi, driver.NotArray(ts), limit)
}

// pageStatements are the page statements of an order, for one topic or for
// an array of topics (many).
func pageStatements(many bool, o model.Order) (bySeq, byTs, mixed string) {
	switch {
	case !many && o != model.Desc:
		return messagePageBySequenceAsc, messagePageByTimestampAsc, messagePageMixedAsc
	case !many:
		return messagePageBySequenceDesc, messagePageByTimestampDesc, messagePageMixedDesc
	case o != model.Desc:
		return messagePagesBySequenceAsc, messagePagesByTimestampAsc, messagePagesMixedAsc
	}
	return messagePagesBySequenceDesc, messagePagesByTimestampDesc, messagePagesMixedDesc
}

func (r *Reader) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	return r.oneMessage(ctx, messageBySequenceSQL, int64(topic), seq)
}

func (r *Reader) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	return r.oneMessage(ctx, messageByTimestampSQL, int64(ts))
}

// oneMessage runs a lookup: app.ErrNotFound for no row or several.
func (r *Reader) oneMessage(ctx context.Context, query string, args ...any) (*model.TopicMessage, error) {
	ms := make([]model.TopicMessage, 0, 2)
	if err := r.env.Query(ctx, func(rows driver.RowSource) (err error) { ms, err = driver.ScanMessages(rows, ms); return err }, query, args...); err != nil {
		return nil, err
	}
	if len(ms) != 1 {
		return nil, app.ErrNotFound
	}
	return &ms[0], nil
}

func (r *Reader) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	out := make(map[app.TopicSequence]*model.TopicMessage, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	topics := make([]int64, len(keys))
	seqs := make([]int64, len(keys))
	for i, k := range keys {
		topics[i], seqs[i] = int64(k.TopicID), k.SequenceNumber
	}
	rows := make([]model.TopicMessage, 0, len(keys))
	err := r.env.Query(ctx, func(rs driver.RowSource) (err error) { rows, err = driver.ScanMessages(rs, rows); return err },
		messagesBySequenceSQL, driver.Int64Array(topics), driver.Int64Array(seqs))
	if err != nil {
		return nil, fmt.Errorf("%d messages by sequence number: %w", len(keys), err)
	}
	for i := range rows {
		out[app.TopicSequence{TopicID: rows[i].TopicID, SequenceNumber: rows[i].SequenceNumber}] = &rows[i]
	}
	return out, nil
}

func (r *Reader) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	// Each timestamp once: a row found twice below means two messages at
	// that time, not a timestamp asked twice.
	stamps = slices.Compact(slices.Sorted(slices.Values(stamps)))
	rows := make([]model.TopicMessage, 0, len(stamps))
	err := r.env.Query(ctx, func(rs driver.RowSource) (err error) { rows, err = driver.ScanMessages(rs, rows); return err },
		messagesByTimestampSQL, driver.Int64Array(stamps))
	if err != nil {
		return nil, fmt.Errorf("%d messages by timestamp: %w", len(stamps), err)
	}
	out := make(map[model.Timestamp]*model.TopicMessage, len(rows))
	ambiguous := map[model.Timestamp]bool{}
	for i := range rows {
		ts := rows[i].ConsensusTimestamp
		if _, twice := out[ts]; twice {
			ambiguous[ts] = true
		}
		out[ts] = &rows[i]
	}
	for ts := range ambiguous {
		delete(out, ts)
	}
	return out, nil
}
