package app

import (
	"context"

	"mirrorql/db"
	"mirrorql/model"
)

// Reader is what the faces ask of the ledger. Its errors are app's: a
// NotFound, an Unavailable, or a BadRequest.
type Reader interface {
	// TopicMessages is a page of one topic's messages.
	TopicMessages(ctx context.Context, q MessageQuery) (MessagePage, error)
	// MessageBySequence is the message with that sequence number in the topic.
	MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error)
	// MessageByTimestamp is the message a successful submit at that consensus
	// time wrote.
	MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error)
	// MessageOfTopicAt is MessageByTimestamp when that message is the topic's.
	MessageOfTopicAt(ctx context.Context, topic model.EntityID, ts model.Timestamp) (*model.TopicMessage, error)
	// Topic is the topic, entity and custom fee rows of one topic: NotFound
	// only when none exists (REST's topic details tell the rows apart).
	Topic(ctx context.Context, id model.EntityID) (*model.Topic, error)
	// TopicEntity is the topic with an entity row.
	TopicEntity(ctx context.Context, id model.EntityID) (*model.Topic, error)
	// Topics is a page of topic entities.
	Topics(ctx context.Context, q TopicQuery) (TopicPage, error)
	// Schedule is one schedule with its signatures.
	Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error)
	// Schedules is a page of schedules with their signatures.
	Schedules(ctx context.Context, q ScheduleQuery) (SchedulePage, error)
	// FollowableTopic checks that a subscription may follow id: NotFound
	// when no entity has that id, a BadRequest when it is not a topic.
	FollowableTopic(ctx context.Context, id model.EntityID) error
}

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

// pageOf trims a page read with lookahead and fills in its paging fields.
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
	db.MessageFilter
	// Lookahead reads one row past Limit to know whether another page
	// exists (GraphQL's hasNextPage).
	Lookahead bool
	// NoSuchTopic, when set, is the message of the NotFound that answers an
	// empty page of a topic that does not exist (REST, docs/reference/DECISIONS.md #2, names
	// the topic as the client wrote it); unset, such a page is just empty.
	NoSuchTopic string
}

// Filter is the query layer's filter for q, the lookahead row included.
func (q *MessageQuery) Filter() db.MessageFilter {
	f := q.MessageFilter
	if q.Lookahead {
		f.Limit++
	}
	return f
}

// Page is the page of rows read with q.Filter().
func (q *MessageQuery) Page(rows []model.TopicMessage) MessagePage {
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, MessageKey)
}

// TopicQuery selects a page of topic entities ordered by id.
type TopicQuery struct {
	ID        []model.Condition[model.EntityID]
	Order     model.Order
	Limit     int
	Lookahead bool
}

// ScheduleQuery selects a page of schedules ordered by id. NoMatch: a value
// named no entity (an opaque EVM address), so the page is empty.
type ScheduleQuery struct {
	db.ScheduleFilter
	Lookahead bool
}

func lookahead(limit int, on bool) int {
	if on {
		return limit + 1
	}
	return limit
}

// Ledger is the Reader over the query layer.
type Ledger struct{ db *db.DB }

var _ Reader = (*Ledger)(nil)

// New is the Reader over d.
func New(d *db.DB) *Ledger { return &Ledger{db: d} }

func (l *Ledger) TopicMessages(ctx context.Context, q MessageQuery) (MessagePage, error) {
	rows, err := l.db.MessagesOfTopic(ctx, q.Filter())
	if err != nil {
		return MessagePage{}, DBError(err)
	}
	if len(rows) == 0 && q.NoSuchTopic != "" {
		exists, err := l.db.TopicExists(ctx, q.TopicID)
		if err != nil {
			return MessagePage{}, DBError(err)
		}
		if !exists {
			return MessagePage{}, &NotFound{Message: "No such topic id - " + q.NoSuchTopic}
		}
	}
	return q.Page(rows), nil
}

func (l *Ledger) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	m, err := l.db.MessageBySequence(ctx, topic, seq)
	if err != nil {
		return nil, DBError(err)
	}
	return m, nil
}

func (l *Ledger) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := l.db.MessageByTimestamp(ctx, ts)
	if err != nil {
		return nil, DBError(err)
	}
	return m, nil
}

func (l *Ledger) MessageOfTopicAt(ctx context.Context, topic model.EntityID, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := l.MessageByTimestamp(ctx, ts)
	if err == nil && m.TopicID != topic {
		return nil, ErrNotFound
	}
	return m, err
}

func (l *Ledger) Topic(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	t, err := l.db.Topic(ctx, id)
	if err != nil {
		return nil, DBError(err)
	}
	return t, nil
}

func (l *Ledger) TopicEntity(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	rows, err := l.db.TopicsByID(ctx, []model.EntityID{id})
	if err != nil {
		return nil, DBError(err)
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

func (l *Ledger) Topics(ctx context.Context, q TopicQuery) (TopicPage, error) {
	rows, err := l.db.Topics(ctx, db.TopicFilter{ID: q.ID, Order: q.Order, Limit: lookahead(q.Limit, q.Lookahead)})
	if err != nil {
		return TopicPage{}, DBError(err)
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, TopicKey), nil
}

func (l *Ledger) Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error) {
	s, err := l.db.Schedule(ctx, id)
	if err != nil {
		return nil, DBError(err)
	}
	return s, nil
}

func (l *Ledger) Schedules(ctx context.Context, q ScheduleQuery) (SchedulePage, error) {
	rows, err := l.db.Schedules(ctx, db.ScheduleFilter{ScheduleID: q.ScheduleID, CreatorAccountID: q.CreatorAccountID,
		NoMatch: q.NoMatch, Order: q.Order, Limit: lookahead(q.Limit, q.Lookahead)})
	if err != nil {
		return SchedulePage{}, DBError(err)
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, ScheduleKey), nil
}

func (l *Ledger) FollowableTopic(ctx context.Context, id model.EntityID) error {
	kind, err := l.db.EntityKind(ctx, id)
	switch {
	case err != nil:
		err = DBError(err)
		if IsNotFound(err) {
			return &NotFound{Message: id.String() + " does not exist"}
		}
		return err
	case kind != "TOPIC":
		return Invalid("Not a valid topic")
	}
	return nil
}
