package db

import (
	"context"
	"fmt"

	"mirrorql/app"
	"mirrorql/model"
)

// MessageBySequence is the message with that sequence number in the topic,
// found on the unique (topic_id, sequence_number) index.
// Concurrent lookups share statements (coalescer).
func (d *DB) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	m, err := d.bySequence.get(ctx, app.TopicSequence{TopicID: topic, SequenceNumber: seq})
	if err != nil && err != app.ErrNotFound {
		return nil, fmt.Errorf("message %d of topic %s: %w", seq, topic, err)
	}
	return m, err
}

// MessageByTimestamp is the message a successful submit transaction at that
// consensus time wrote. Anything but exactly one row is not found.
// Concurrent lookups share statements (coalescer).
func (d *DB) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := d.byTimestamp.get(ctx, ts)
	if err != nil && err != app.ErrNotFound {
		return nil, fmt.Errorf("message at %s: %w", ts, err)
	}
	return m, err
}

// MessagesBySequence is MessageBySequence for several messages in one
// statement on the unique (topic_id, sequence_number) index. Missing
// messages are absent from the map.
func (d *DB) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	return d.reader().MessagesBySequence(ctx, keys)
}

// MessagesByTimestamp is MessageByTimestamp for several timestamps in one
// statement; a timestamp that finds no message or several is absent.
func (d *DB) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	return d.reader().MessagesByTimestamp(ctx, stamps)
}
