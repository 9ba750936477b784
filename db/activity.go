package db

import (
	"context"
	"fmt"

	"mirrorql/model"
)

// Sequence numbers are consecutive within a topic and grow with consensus
// time, so the number of a topic's messages in [a, b) is the difference of
// the first sequence numbers at or after b and at or after a — one probe of
// the (topic_id, consensus_timestamp) index each, whatever the topic holds.
// Past the last message the "first at or after" is the last one plus one,
// and before the first it is the first held, so the differences count only
// what the database holds even when its history of the topic starts later
// than sequence number 1.

// LatestMessages is the newest message of each topic that has one.
func (d *DB) LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
	out, err := d.reader().LatestMessages(ctx, topics)
	if err != nil {
		return nil, fmt.Errorf("latest messages of %d topics: %w", len(topics), err)
	}
	return out, nil
}

// Activity counts the topic's messages between consecutive boundaries
// (ascending): len(bounds)-1 counts, in one statement.
func (d *DB) Activity(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	firsts, err := d.reader().Firsts(ctx, topic, bounds)
	if err != nil {
		return nil, fmt.Errorf("activity of topic %s: %w", topic, err)
	}
	if len(firsts) != len(bounds) {
		return nil, failed(fmt.Errorf("activity of topic %s: %d boundaries answered, want %d", topic, len(firsts), len(bounds)))
	}
	counts := make([]int64, len(bounds)-1)
	for i := range counts {
		counts[i] = firsts[i+1] - firsts[i]
	}
	return counts, nil
}
