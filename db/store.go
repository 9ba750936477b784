package db

import (
	"context"
	"errors"

	"mirrorql/app"
	"mirrorql/model"
)

// Store is the query layer as the core asks for it (app.Store): the same
// questions as DB's, with app's filters and app's errors. It is the only
// place where db's errors become app's vocabulary.
type Store struct{ d *DB }

var (
	_ app.Store     = Store{}
	_ app.LiveStore = Store{}
)

// NewStore is d as an app.Store.
func NewStore(d *DB) Store { return Store{d: d} }

// AppError maps a query-layer error to app's vocabulary: nil stays nil,
// ErrNotFound is app.ErrNotFound, anything else is an app.Unavailable,
// marked as an outage when the database could not be reached at all (Health
// logs that once per change of state, so a face need not per request).
func AppError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return app.ErrNotFound
	}
	var u *app.Unavailable
	if errors.As(err, &u) {
		return u
	}
	return &app.Unavailable{Cause: err, Down: Unavailable(err)}
}

func (s Store) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int) (app.Poll, error) {
	p, err := s.d.LivePoll(ctx, after, topics, limit)
	return p, AppError(err)
}

func (s Store) MessagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	rows, err := s.d.MessagesOfTopic(ctx, f)
	return rows, AppError(err)
}

func (s Store) MessagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	rows, err := s.d.MessagesOfTopics(ctx, topics, f)
	return rows, AppError(err)
}

func (s Store) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	m, err := s.d.MessageBySequence(ctx, topic, seq)
	return m, AppError(err)
}

func (s Store) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	found, err := s.d.MessagesBySequence(ctx, keys)
	return found, AppError(err)
}

func (s Store) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := s.d.MessageByTimestamp(ctx, ts)
	return m, AppError(err)
}

func (s Store) LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
	found, err := s.d.LatestMessages(ctx, topics)
	return found, AppError(err)
}

func (s Store) ChunksOf(ctx context.Context, msgs []*model.TopicMessage) ([][]model.TopicMessage, error) {
	chunks, err := s.d.ChunksOf(ctx, msgs)
	return chunks, AppError(err)
}

func (s Store) Activity(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	counts, err := s.d.Activity(ctx, topic, bounds)
	return counts, AppError(err)
}

func (s Store) TopicExists(ctx context.Context, topic model.EntityID) (bool, error) {
	ok, err := s.d.TopicExists(ctx, topic)
	return ok, AppError(err)
}

func (s Store) Topic(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	t, err := s.d.Topic(ctx, id)
	return t, AppError(err)
}

func (s Store) TopicsByID(ctx context.Context, ids []model.EntityID) ([]model.Topic, error) {
	rows, err := s.d.TopicsByID(ctx, ids)
	return rows, AppError(err)
}

func (s Store) Topics(ctx context.Context, f app.TopicFilter) ([]model.Topic, error) {
	rows, err := s.d.Topics(ctx, f)
	return rows, AppError(err)
}

func (s Store) EntityKind(ctx context.Context, id model.EntityID) (string, error) {
	kind, err := s.d.EntityKind(ctx, id)
	return kind, AppError(err)
}

func (s Store) Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error) {
	sc, err := s.d.Schedule(ctx, id)
	return sc, AppError(err)
}

func (s Store) SchedulesVersion(ctx context.Context) (string, error) {
	v, err := s.d.SchedulesVersion(ctx)
	return v, AppError(err)
}

func (s Store) Schedules(ctx context.Context, f app.ScheduleFilter) ([]model.Schedule, error) {
	rows, err := s.d.Schedules(ctx, f)
	return rows, AppError(err)
}
