package app

import (
	"context"

	"mirrorql/model"
)

// Page is a page of rows ordered by a paging key of type K.
type Page[T, K any] struct {
	Rows []T
	// Full: the page holds as many rows as the limit (REST's condition for
	// links.next; that next page may turn out empty).
	Full bool
	// More: the query looked ahead and another row exists past the page.
	More bool
	// Next is where the page after this one starts (After its last row);
	// zero when Rows is empty.
	Next model.Condition[K]
}

type (
	MessagePage  = Page[model.TopicMessage, model.Timestamp]
	TopicPage    = Page[model.Topic, model.EntityID]
	SchedulePage = Page[model.Schedule, model.EntityID]
)

// A page that looks ahead (a query's Lookahead) is read one row past its
// limit (readLimit) and trimmed back to it (pageOf), the extra row only
// telling whether another page exists. Every list reads its pages through
// these two, whichever face asked and however many topics share the read.

// readLimit is how many rows to read for a page of limit rows.
func readLimit(limit int, lookahead bool) int {
	if lookahead {
		return limit + 1
	}
	return limit
}

// pageOf trims a page read with readLimit and fills in its paging fields.
func pageOf[T, K any](rows []T, limit int, lookahead bool, order model.Order, key func(*T) K) Page[T, K] {
	p := Page[T, K]{Rows: rows}
	if lookahead && len(rows) > limit {
		p.Rows, p.More = rows[:limit], true
	}
	p.Full = len(p.Rows) >= limit
	if n := len(p.Rows); n > 0 {
		p.Next = After(order, key(&p.Rows[n-1]))
	}
	return p
}

// MessageQuery selects a page of one topic's messages; the conditions are
// ANDed.
type MessageQuery struct {
	TopicID        model.EntityID
	SequenceNumber []model.Condition[int64]
	Timestamp      []model.Condition[model.Timestamp]
	Order          model.Order
	Limit          int
	// Lookahead reads one row past Limit to know whether another page
	// exists (GraphQL's hasNextPage).
	Lookahead bool
	// NoSuchTopic, when set, is the message of the NotFound that answers an
	// empty page of a topic that does not exist (REST, docs/reference/DECISIONS.md #2, names
	// the topic as the client wrote it); unset, such a page is just empty.
	NoSuchTopic string
}

// Filter is the store's filter for q, the lookahead row included: the one
// place the conditions are reduced (model.RangeOf), so that no store sees
// them. False when they admit no message: the page is empty, and no store
// is asked for it (the live streams' reads too).
func (q *MessageQuery) Filter() (MessageFilter, bool) {
	f := MessageFilter{TopicID: q.TopicID, Order: q.Order, Limit: readLimit(q.Limit, q.Lookahead)}
	var seq, ts bool
	f.SequenceNumber, seq = rangeOf(q.SequenceNumber)
	f.Timestamp, ts = rangeOf(q.Timestamp)
	return f, seq && ts
}

// rangeOf is the range conds admit, nil when there are none; false when
// they admit no value.
func rangeOf[T ~int64](conds []model.Condition[T]) (*model.Range, bool) {
	if len(conds) == 0 {
		return nil, true
	}
	r, ok := model.RangeOf(conds)
	return &r, ok
}

// page is the page of rows read with q.Filter().
func (q *MessageQuery) page(rows []model.TopicMessage) MessagePage {
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, MessageKey)
}

// TopicQuery selects a page of topic entities ordered by id.
type TopicQuery struct {
	TopicFilter
	Lookahead bool
}

// ScheduleQuery selects a page of schedules ordered by id. NoMatch: a value
// named no entity (an opaque EVM address), so the page is empty.
type ScheduleQuery struct {
	ScheduleFilter
	Lookahead bool
}

// Ledger is every face's reader over a Store: its methods are what app
// adds to the store's reads (the rules applied, pages, reads combined and
// checked). Where app adds nothing (a message by sequence number or
// timestamp, a topic's rows, a schedule, the schedules' version, the batches
// of GraphQL's nested fields) a face asks the store itself (Store), so that
// no read of the ledger stands for the store's of the same name.
type Ledger struct {
	store Store
	rules Rules
}

// New is the Ledger over s with the rules r (its zero sizes defaulted).
func New(s Store, r Rules) *Ledger { return &Ledger{store: s, rules: r.withDefaults()} }

// Store is the store under the ledger, for the reads app adds nothing to.
func (l *Ledger) Store() Store { return l.store }

func (l *Ledger) Rules() Rules { return l.rules }

func (l *Ledger) TopicMessages(ctx context.Context, q MessageQuery) (MessagePage, error) {
	rows := []model.TopicMessage{} // as a store answers an empty page
	if f, ok := q.Filter(); ok {
		var err error
		if rows, err = l.store.MessagesOfTopic(ctx, f); err != nil {
			return MessagePage{}, err
		}
	}
	if len(rows) == 0 && q.NoSuchTopic != "" {
		exists, err := l.store.TopicExists(ctx, q.TopicID)
		if err != nil {
			return MessagePage{}, err
		}
		if !exists {
			return MessagePage{}, &NotFound{Message: "No such topic id - " + q.NoSuchTopic}
		}
	}
	return q.page(rows), nil
}

func (l *Ledger) MessageOfTopicAt(ctx context.Context, topic model.EntityID, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := l.store.MessageByTimestamp(ctx, ts)
	if err == nil && m.TopicID != topic {
		return nil, ErrNotFound
	}
	return m, err
}

func (l *Ledger) TopicEntity(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	rows, err := l.store.TopicsByID(ctx, []model.EntityID{id})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

func (l *Ledger) Topics(ctx context.Context, q TopicQuery) (TopicPage, error) {
	f := q.TopicFilter
	f.Limit = readLimit(q.Limit, q.Lookahead)
	rows, err := l.store.Topics(ctx, f)
	if err != nil {
		return TopicPage{}, err
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, TopicKey), nil
}

func (l *Ledger) Schedules(ctx context.Context, q ScheduleQuery) (SchedulePage, error) {
	f := q.ScheduleFilter
	f.Limit = readLimit(q.Limit, q.Lookahead)
	rows, err := l.store.Schedules(ctx, f)
	if err != nil {
		return SchedulePage{}, err
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, ScheduleKey), nil
}

func (l *Ledger) FollowableTopic(ctx context.Context, id model.EntityID) error {
	kind, err := l.store.EntityKind(ctx, id)
	switch {
	case IsNotFound(err):
		return &NotFound{Message: id.String() + " does not exist"}
	case err != nil:
		return err
	case kind != "TOPIC":
		return Invalid("Not a valid topic")
	}
	return nil
}

func (l *Ledger) MessagesOfTopics(ctx context.Context, topics []model.EntityID, q MessageQuery) (map[model.EntityID]MessagePage, error) {
	var found map[model.EntityID][]model.TopicMessage
	if f, ok := q.Filter(); ok {
		var err error
		if found, err = l.store.MessagesOfTopics(ctx, topics, f); err != nil {
			return nil, err
		}
	}
	pages := make(map[model.EntityID]MessagePage, len(topics))
	for _, t := range topics {
		pages[t] = q.page(found[t])
	}
	return pages, nil
}
