package db

import (
	"context"
	"fmt"
	"slices"

	"mirrorql/app"
	"mirrorql/model"
)

// messageColumns are the topic_message columns every message statement
// selects, in the order scanMessages reads them.
const messageColumns = "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, " +
	"chunk_num, chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"

// messageColumnsM is messageColumns of the alias m, spelled out because a
// constant cannot call prefixed (a test keeps the two lists the same).
const messageColumnsM = "m.consensus_timestamp, m.message, m.running_hash, m.sequence_number, " +
	"m.running_hash_version, m.chunk_num, m.chunk_total, m.payer_account_id, m.valid_start_timestamp, " +
	"m.topic_id, m.initial_transaction_id"

// The point lookups of a message are fixed texts with parameters, each
// prepared once per connection (see Options.Prepare), so that a lookup costs
// the server an execution, not a parse and a plan.
const (
	messageBySequenceSQL = "SELECT " + messageColumns + " FROM topic_message WHERE topic_id = $1 AND sequence_number = $2"

	// The transaction's primary key, then the (topic_id, consensus_timestamp)
	// index; a second row would make the answer ambiguous, hence LIMIT 2.
	messageByTimestampSQL = "SELECT " + messageColumnsM + " " +
		"FROM transaction AS t JOIN topic_message AS m " +
		"ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp " +
		"WHERE t.consensus_timestamp = $1 AND t.result = 22 AND t.type = 27 LIMIT 2"

	// The same lookups for many keys at once: the coalescers' batches and
	// GraphQL's Topic.message loader. Each key is one probe of the index the
	// single lookup uses (the EXPLAIN test checks the generic plan too).
	messagesBySequenceSQL = "SELECT " + messageColumnsM + " " +
		"FROM unnest($1::bigint[], $2::bigint[]) AS k(topic_id, sequence_number) JOIN topic_message AS m " +
		"ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number"
	messagesByTimestampSQL = "SELECT " + messageColumnsM + " " +
		"FROM unnest($1::bigint[]) AS k(consensus_timestamp) " +
		"JOIN transaction AS t ON t.consensus_timestamp = k.consensus_timestamp " +
		"JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp " +
		"WHERE t.result = 22 AND t.type = 27"
)

// MessageBySequence is the message with that sequence number in the topic,
// found on the unique (topic_id, sequence_number) index.
// Concurrent lookups share statements (coalescer).
func (d *DB) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	m, err := d.bySequence.get(ctx, app.TopicSequence{TopicID: topic, SequenceNumber: seq})
	if err != nil && err != ErrNotFound {
		return nil, fmt.Errorf("message %d of topic %s: %w", seq, topic, err)
	}
	return m, err
}

// MessageByTimestamp is the message a successful submit transaction at that
// consensus time wrote. Anything but exactly one row is not found.
// Concurrent lookups share statements (coalescer).
func (d *DB) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	m, err := d.byTimestamp.get(ctx, ts)
	if err != nil && err != ErrNotFound {
		return nil, fmt.Errorf("message at %s: %w", ts, err)
	}
	return m, err
}

// oneMessage runs a lookup: ErrNotFound for no row or several.
func (d *DB) oneMessage(ctx context.Context, query string, args ...any) (*model.TopicMessage, error) {
	ms := make([]model.TopicMessage, 0, 2)
	if err := d.query(ctx, func(rows rowSource) (err error) { ms, err = scanMessages(rows, ms); return err }, query, args...); err != nil {
		return nil, err
	}
	if len(ms) != 1 {
		return nil, ErrNotFound
	}
	return &ms[0], nil
}

// MessagesBySequence is MessageBySequence for several messages in one
// statement on the unique (topic_id, sequence_number) index. Missing
// messages are absent from the map.
func (d *DB) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	if p := d.v2(); p != nil {
		return d.messagesBySequenceV2(ctx, p, keys)
	}
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
	err := d.query(ctx, func(rs rowSource) (err error) { rows, err = scanMessages(rs, rows); return err },
		messagesBySequenceSQL, int64Array(topics), int64Array(seqs))
	if err != nil {
		return nil, fmt.Errorf("%d messages by sequence number: %w", len(keys), err)
	}
	for i := range rows {
		out[app.TopicSequence{TopicID: rows[i].TopicID, SequenceNumber: rows[i].SequenceNumber}] = &rows[i]
	}
	return out, nil
}

// MessagesByTimestamp is MessageByTimestamp for several timestamps in one
// statement; a timestamp that finds no message or several is absent.
func (d *DB) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	if p := d.v2(); p != nil {
		return d.messagesByTimestampV2(ctx, p, stamps)
	}
	// Each timestamp once: a row found twice below means two messages at
	// that time, not a timestamp asked twice.
	stamps = slices.Compact(slices.Sorted(slices.Values(stamps)))
	rows := make([]model.TopicMessage, 0, len(stamps))
	err := d.query(ctx, func(rs rowSource) (err error) { rows, err = scanMessages(rs, rows); return err },
		messagesByTimestampSQL, int64Array(stamps))
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
