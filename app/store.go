package app

import (
	"context"

	"mirrorql/model"
)

// Store is what the Ledger reads: the query layer, in the core's types.
// Package db's *DB is one as it is, so the core names its questions and the
// query layer answers them, not the other way round. Its errors are already
// app's: ErrNotFound (perhaps wrapped) for a lookup that found nothing, an
// Unavailable for any failure.
type Store interface {
	LiveStore
	MessagesOfTopics(ctx context.Context, topics []model.EntityID, f MessageFilter) (map[model.EntityID][]model.TopicMessage, error)
	MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error)
	MessagesBySequence(ctx context.Context, keys []TopicSequence) (map[TopicSequence]*model.TopicMessage, error)
	MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error)
	LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error)
	ChunksOf(ctx context.Context, msgs []*model.TopicMessage) ([][]model.TopicMessage, error)
	Activity(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error)
	TopicExists(ctx context.Context, topic model.EntityID) (bool, error)
	Topic(ctx context.Context, id model.EntityID) (*model.Topic, error)
	TopicsByID(ctx context.Context, ids []model.EntityID) ([]model.Topic, error)
	Topics(ctx context.Context, f TopicFilter) ([]model.Topic, error)
	EntityKind(ctx context.Context, id model.EntityID) (string, error)
	Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error)
	Schedules(ctx context.Context, f ScheduleFilter) ([]model.Schedule, error)
	// SchedulesVersion names the data the schedules list reads: it changes
	// when those rows are reloaded (not on every write), so a response
	// cache keyed by it never answers with the rows of before.
	SchedulesVersion(ctx context.Context) (string, error)
}

// LiveStore is what the live streams read (package live): the poll of every
// followed topic at once, and pages of one topic for the history and the
// gaps.
type LiveStore interface {
	LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int) (Poll, error)
	MessagesOfTopic(ctx context.Context, f MessageFilter) ([]model.TopicMessage, error)
}

// The filters, keys and results below are the boundary's only types: the
// query layer takes and returns them as they are (db has no twins of its
// own), so a field added here reaches the statement without a conversion.

// MessageFilter selects a page of one topic's messages: those whose sequence
// number and consensus timestamp lie in the ranges, the client's conditions
// reduced once, by MessageQuery.Filter. A nil range is a column no condition
// restricts, so the zero filter is every message of the topic; which of the
// two are set is also what lets a store choose its index (only sequence
// numbers restricted: the page can walk them). A range is never empty: a
// query whose conditions admit no message is answered empty without a read.
type MessageFilter struct {
	TopicID        model.EntityID
	SequenceNumber *model.Range
	Timestamp      *model.Range
	Order          model.Order
	Limit          int
}

// ScheduleFilter selects a page of schedules ordered by schedule id.
// NoMatch is set when a filter value names no entity (an opaque EVM address):
// the page is empty without a query.
type ScheduleFilter struct {
	ScheduleID       []model.Condition[model.EntityID]
	CreatorAccountID []model.Condition[model.EntityID]
	NoMatch          bool
	Order            model.Order
	Limit            int
}

// TopicFilter selects a page of topic entities ordered by id.
type TopicFilter struct {
	ID    []model.Condition[model.EntityID]
	Order model.Order
	Limit int
}

// TopicSequence names one message: a topic and a sequence number.
type TopicSequence struct {
	TopicID        model.EntityID
	SequenceNumber int64
}

// Poll is what one live poll found.
type Poll struct {
	// Messages of the subscribed topics past the watermark, in consensus
	// order (so in sequence order within a topic).
	Messages []model.TopicMessage
	// Scanned is the newest submit transaction the poll walked past (0 when
	// none). It can be ahead of the newest message when a transaction row
	// has no message row.
	Scanned model.Timestamp
	// Head is the newest transaction of the ledger (0 when there is none).
	Head model.Timestamp
	// Full: the walk stopped at its limit (counted in transactions, some of
	// which may have no message row); more may be waiting. Otherwise the
	// walk reached Head: in the statement's snapshot, no submit transaction
	// of the topics is after Scanned and at or before Head.
	Full bool
}
