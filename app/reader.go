package app

import (
	"context"

	"mirrorql/model"
)

// Reader is what every face asks of the ledger. Its errors are app's: a
// NotFound, an Unavailable, or a BadRequest.
type Reader interface {
	// Rules are the settings every face applies the same way: page sizes
	// and the shard and realm of short ids.
	Rules() Rules
	// TopicMessages is a page of one topic's messages.
	TopicMessages(ctx context.Context, q MessageQuery) (MessagePage, error)
	// MessageBySequence is the message with that sequence number in the topic.
	MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error)
	// MessageByTimestamp is the message a successful submit at that consensus
	// time wrote.
	MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error)
	// Schedule is one schedule with its signatures.
	Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error)
	// Schedules is a page of schedules with their signatures.
	Schedules(ctx context.Context, q ScheduleQuery) (SchedulePage, error)
	// FollowableTopic checks that a subscription may follow id: NotFound
	// when no entity has that id, a BadRequest when it is not a topic
	// (GraphQL's subscriptions and gRPC's subscribeTopic).
	FollowableTopic(ctx context.Context, id model.EntityID) error
}

// RESTReader is Reader and what only the REST face asks.
type RESTReader interface {
	Reader
	// MessageOfTopicAt is MessageByTimestamp when that message is the
	// topic's (the by-sequence route given a timestamp, docs/reference/DECISIONS.md #8).
	MessageOfTopicAt(ctx context.Context, topic model.EntityID, ts model.Timestamp) (*model.TopicMessage, error)
	// Topic is the topic, entity and custom fee rows of one topic: NotFound
	// only when none exists (rest-java's topic details tell the rows apart).
	Topic(ctx context.Context, id model.EntityID) (*model.Topic, error)
}

// GraphReader is Reader and what only the GraphQL face asks: the topics
// and the batched reads of nested fields (its
// dataloaders ask for a whole page's keys at once).
type GraphReader interface {
	Reader
	// TopicEntity is the topic with an entity row.
	TopicEntity(ctx context.Context, id model.EntityID) (*model.Topic, error)
	// Topics is a page of topic entities.
	Topics(ctx context.Context, q TopicQuery) (TopicPage, error)
	// TopicsByID are the topics with an entity row among ids.
	TopicsByID(ctx context.Context, ids []model.EntityID) ([]model.Topic, error)
	// MessagesBySequence are the messages that exist among keys.
	MessagesBySequence(ctx context.Context, keys []TopicSequence) (map[TopicSequence]*model.TopicMessage, error)
	// MessagesOfTopics is the page q selects of each of topics (q.TopicID
	// and q.NoSuchTopic aside), every one of them in the map: the nested
	// Topic.messages of a whole list of topics at once.
	MessagesOfTopics(ctx context.Context, topics []model.EntityID, q MessageQuery) (map[model.EntityID]MessagePage, error)
	// LatestMessages is the newest message of each topic that has one.
	LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error)
	// ChunksOf is, for each chunked message, the chunks of its logical
	// message (db.ChunkWindow); nil for an unchunked one.
	ChunksOf(ctx context.Context, msgs []*model.TopicMessage) ([][]model.TopicMessage, error)
	// Activity counts a topic's messages between consecutive boundaries.
	Activity(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error)
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
	MessageFilter
	// Lookahead reads one row past Limit to know whether another page
	// exists (GraphQL's hasNextPage).
	Lookahead bool
	// NoSuchTopic, when set, is the message of the NotFound that answers an
	// empty page of a topic that does not exist (REST, docs/reference/DECISIONS.md #2, names
	// the topic as the client wrote it); unset, such a page is just empty.
	NoSuchTopic string
}

// filter is the store's filter for q, the lookahead row included.
func (q *MessageQuery) filter() MessageFilter {
	f := q.MessageFilter
	f.Limit = readLimit(q.Limit, q.Lookahead)
	return f
}

// page is the page of rows read with q.filter().
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

// Ledger is every face's reader over a Store. It embeds the Store so that
// where app adds nothing (a message by sequence number or timestamp, a
// topic's rows, a schedule, the schedules' version, the batches of GraphQL's
// nested fields) a face's read is the store's own, and a method is written
// here only when it does something: apply the rules, page, or combine and
// check the store's reads. Its Topics, Schedules and MessagesOfTopics take
// app's queries and shadow the store's reads of those names.
type Ledger struct {
	Store
	rules Rules
}

var (
	_ RESTReader  = (*Ledger)(nil)
	_ GraphReader = (*Ledger)(nil)
)

// New is the Ledger over s with the rules r (its zero sizes defaulted).
func New(s Store, r Rules) *Ledger { return &Ledger{Store: s, rules: r.withDefaults()} }

func (l *Ledger) Rules() Rules { return l.rules }

func (l *Ledger) TopicMessages(ctx context.Context, q MessageQuery) (MessagePage, error) {
	rows, err := l.Store.MessagesOfTopic(ctx, q.filter())
	if err != nil {
		return MessagePage{}, err
	}
	if len(rows) == 0 && q.NoSuchTopic != "" {
		exists, err := l.Store.TopicExists(ctx, q.TopicID)
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
	m, err := l.Store.MessageByTimestamp(ctx, ts)
	if err == nil && m.TopicID != topic {
		return nil, ErrNotFound
	}
	return m, err
}

func (l *Ledger) TopicEntity(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	rows, err := l.Store.TopicsByID(ctx, []model.EntityID{id})
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
	rows, err := l.Store.Topics(ctx, f)
	if err != nil {
		return TopicPage{}, err
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, TopicKey), nil
}

func (l *Ledger) Schedules(ctx context.Context, q ScheduleQuery) (SchedulePage, error) {
	f := q.ScheduleFilter
	f.Limit = readLimit(q.Limit, q.Lookahead)
	rows, err := l.Store.Schedules(ctx, f)
	if err != nil {
		return SchedulePage{}, err
	}
	return pageOf(rows, q.Limit, q.Lookahead, q.Order, ScheduleKey), nil
}

func (l *Ledger) FollowableTopic(ctx context.Context, id model.EntityID) error {
	kind, err := l.Store.EntityKind(ctx, id)
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
	found, err := l.Store.MessagesOfTopics(ctx, topics, q.filter())
	if err != nil {
		return nil, err
	}
	pages := make(map[model.EntityID]MessagePage, len(topics))
	for _, t := range topics {
		pages[t] = q.page(found[t])
	}
	return pages, nil
}
