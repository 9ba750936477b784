package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"mirrorql/model"
)

const messageColumns = "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, " +
	"chunk_num, chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"

// MessageFilter selects a page of one topic's messages. Conditions are ANDed.
type MessageFilter struct {
	TopicID        model.EntityID
	SequenceNumber []model.Condition[int64]
	Timestamp      []model.Condition[model.Timestamp]
	Order          model.Order
	Limit          int
}

// MessageBySequence is the message with that sequence number in the topic,
// found on the unique (topic_id, sequence_number) index.
func (d *DB) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	var rows []model.TopicMessage
	err := d.bun.NewSelect().ColumnExpr(messageColumns).TableExpr("topic_message").
		Where("topic_id = ?", int64(topic)).Where("sequence_number = ?", seq).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("message %d of topic %s: %w", seq, topic, err)
	}
	if len(rows) != 1 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// MessageByTimestamp is the message a successful submit transaction at that
// consensus time wrote. One statement: the transaction's primary key, then the
// (topic_id, consensus_timestamp) index. Anything but exactly one row is not found.
func (d *DB) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	var rows []model.TopicMessage
	err := d.bun.NewSelect().ColumnExpr(prefixed("m.", messageColumns)).
		TableExpr("transaction AS t").
		Join("JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp").
		Where("t.consensus_timestamp = ?", int64(ts)).
		Where("t.result = 22").Where("t.type = 27").
		Limit(2).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("message at %s: %w", ts, err)
	}
	if len(rows) != 1 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// MessagesOfTopic is one page of a topic's messages. Within a topic, sequence
// order and consensus order agree, so when only sequence numbers are filtered
// the page walks the (topic_id, sequence_number) index instead of filtering a
// timestamp scan; otherwise it walks (topic_id, consensus_timestamp).
func (d *DB) MessagesOfTopic(ctx context.Context, f MessageFilter) ([]model.TopicMessage, error) {
	q, _ := f.page(d.bun.NewSelect().ColumnExpr(messageColumns).TableExpr("topic_message").
		Where("topic_id = ?", int64(f.TopicID)))
	rows := make([]model.TopicMessage, 0, f.Limit)
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("messages of topic %s: %w", f.TopicID, err)
	}
	return rows, nil
}

// page adds the filter's conditions, order and limit to a query of one
// topic's messages and returns the column it orders by.
func (f *MessageFilter) page(q *bun.SelectQuery) (*bun.SelectQuery, string) {
	for _, c := range f.SequenceNumber {
		q = q.Where("sequence_number "+c.Op.SQL()+" ?", c.Value)
	}
	for _, c := range f.Timestamp {
		q = q.Where("consensus_timestamp "+c.Op.SQL()+" ?", int64(c.Value))
	}
	orderColumn := "consensus_timestamp"
	if len(f.Timestamp) == 0 && len(f.SequenceNumber) > 0 {
		orderColumn = "sequence_number"
	}
	return q.OrderExpr(orderColumn + " " + direction(f.Order)).Limit(int64(f.Limit)), orderColumn
}

// TopicExists reports whether the topic has an entity row or any message; the
// list route asks only after an empty page (DECISIONS #2).
func (d *DB) TopicExists(ctx context.Context, topic model.EntityID) (bool, error) {
	var exists bool
	err := d.bun.NewRaw(`SELECT EXISTS (SELECT 1 FROM entity WHERE id = ?) OR
		EXISTS (SELECT 1 FROM topic_message WHERE topic_id = ?)`, int64(topic), int64(topic)).
		Scan(ctx, &exists)
	if err != nil {
		return false, fmt.Errorf("topic %s exists: %w", topic, err)
	}
	return exists, nil
}

func direction(o model.Order) string {
	if o == model.Desc {
		return "DESC"
	}
	return "ASC"
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(alias, columns string) string {
	out := make([]byte, 0, len(columns)+32)
	out = append(out, alias...)
	for i := 0; i < len(columns); i++ {
		out = append(out, columns[i])
		if columns[i] == ' ' && i > 0 && columns[i-1] == ',' {
			out = append(out, alias...)
		}
	}
	return string(out)
}
