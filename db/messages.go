package db

import (
	"context"
	"fmt"

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
	return d.reader().messagesBySequence(ctx, keys)
}

// MessagesByTimestamp is MessageByTimestamp for several timestamps in one
// statement; a timestamp that finds no message or several is absent.
func (d *DB) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	return d.reader().messagesByTimestamp(ctx, stamps)
}
