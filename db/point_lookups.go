package db

import (
	"context"
	"fmt"

	"mirrorql/model"
)

// pointLookups makes the coalescers of the two point lookups; spread is
// Options.Coalesce.
func (d *DB) pointLookups(spread int) {
	d.bySequence = newCoalescer(spread, func(ctx context.Context, k TopicSequence) (*model.TopicMessage, error) {
		return d.oneMessage(ctx, messageBySequenceSQL, int64(k.TopicID), k.SequenceNumber)
	}, d.MessagesBySequence)
	d.byTimestamp = newCoalescer(spread, func(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
		return d.oneMessage(ctx, messageByTimestampSQL, int64(ts))
	}, d.MessagesByTimestamp)
}

// TopicSequence names one message: a topic and a sequence number.
type TopicSequence struct {
	TopicID        model.EntityID
	SequenceNumber int64
}

// MessagesBySequence is MessageBySequence for several messages in one
// statement on the unique (topic_id, sequence_number) index. Missing
// messages are absent from the map.
func (d *DB) MessagesBySequence(ctx context.Context, keys []TopicSequence) (map[TopicSequence]*model.TopicMessage, error) {
	out := make(map[TopicSequence]*model.TopicMessage, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	topics := make([]int64, len(keys))
	seqs := make([]int64, len(keys))
	for i, k := range keys {
		topics[i], seqs[i] = int64(k.TopicID), k.SequenceNumber
	}
	rows := make([]model.TopicMessage, 0, len(keys))
	err := d.query(ctx, func(rs rowSource) (err error) { rows, err = scanMessages(rs, rows); return err },
		messagesBySequenceSQL, model.Int64Array(topics), model.Int64Array(seqs))
	if err != nil {
		return nil, fmt.Errorf("%d messages by sequence number: %w", len(keys), err)
	}
	for i := range rows {
		out[TopicSequence{rows[i].TopicID, rows[i].SequenceNumber}] = &rows[i]
	}
	return out, nil
}

// MessagesByTimestamp is MessageByTimestamp for several timestamps in one
// statement; a timestamp that finds no message or several is absent.
func (d *DB) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	rows := make([]model.TopicMessage, 0, len(stamps))
	err := d.query(ctx, func(rs rowSource) (err error) { rows, err = scanMessages(rs, rows); return err },
		messagesByTimestampSQL, model.Int64Array(stamps))
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
