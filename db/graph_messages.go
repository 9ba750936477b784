package db

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"mirrorql/model"
)

// Batch questions of the GraphQL face: what one REST request asks about one
// topic or message, asked here for a whole page of them in one statement.

// MessagesOfTopics is MessagesOfTopic for several topics at once, with the
// same filter: one statement, a LATERAL join over the topic ids whose inner
// query is MessagesOfTopic's (same conditions, order and limit per topic, on
// the same indexes). Topics without messages are absent from the map.
func (d *DB) MessagesOfTopics(ctx context.Context, topics []model.EntityID, f MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	out := make(map[model.EntityID][]model.TopicMessage, len(topics))
	if len(topics) == 0 {
		return out, nil
	}
	inner, orderColumn := f.page(d.bun.NewSelect().ColumnExpr(messageColumns).TableExpr("topic_message").
		Where("topic_id = k.id"))
	var rows []model.TopicMessage
	err := d.bun.NewSelect().ColumnExpr(prefixed("m.", messageColumns)).
		TableExpr("unnest(?::bigint[]) AS k(id)", pgdialect.Array(entityIDs(topics))).
		Join("CROSS JOIN LATERAL (?) AS m", inner).
		OrderExpr("m.topic_id, m."+orderColumn+" "+direction(f.Order)).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("messages of %d topics: %w", len(topics), err)
	}
	for _, m := range rows {
		out[m.TopicID] = append(out[m.TopicID], m)
	}
	return out, nil
}

// The chunk window: a chunk's siblings are looked for among the messages of
// its topic whose sequence numbers lie from seq-(number-1)-ChunkWindowSlack
// to seq+(total-number)+ChunkWindowSlack, with number and total clamped to
// ChunkWindowMaxTotal, so that one lookup reads at most
// ChunkWindowMaxTotal+2*ChunkWindowSlack index entries whatever the row says.
const (
	ChunkWindowSlack    = 64
	ChunkWindowMaxTotal = 1024
)

// ChunkWindow is the sequence-number range searched for m's siblings.
func ChunkWindow(m *model.TopicMessage) (lo, hi int64) {
	clamp := func(v int32) int64 { return min(max(int64(v), 1), ChunkWindowMaxTotal) }
	number := clamp(*m.ChunkNum)
	total := number
	if m.ChunkTotal != nil {
		total = max(clamp(*m.ChunkTotal), number)
	}
	return m.SequenceNumber - (number - 1) - ChunkWindowSlack, m.SequenceNumber + (total - number) + ChunkWindowSlack
}

// ChunksOf returns, for each chunked message, every chunk of the same logical
// message found in its ChunkWindow, ordered by chunk number (then consensus
// time); nil for an unchunked message. Siblings share the initial transaction
// id, or for legacy rows (without one) the payer and valid start. One
// statement for the whole batch: a LATERAL range scan of the (topic_id,
// sequence_number) index per message, never a scan of the topic.
func (d *DB) ChunksOf(ctx context.Context, msgs []*model.TopicMessage) ([][]model.TopicMessage, error) {
	out := make([][]model.TopicMessage, len(msgs))
	var topics, los, his []int64
	var idx []int
	for i, m := range msgs {
		if m.ChunkNum == nil {
			continue
		}
		lo, hi := ChunkWindow(m)
		topics, los, his = append(topics, int64(m.TopicID)), append(los, lo), append(his, hi)
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return out, nil
	}
	inner := d.bun.NewSelect().ColumnExpr(messageColumns).TableExpr("topic_message").
		Where("topic_id = k.topic_id").Where("sequence_number BETWEEN k.lo AND k.hi").
		Where("chunk_num IS NOT NULL")
	var rows []chunkRow
	err := d.bun.NewSelect().ColumnExpr("k.i AS key_index").ColumnExpr(prefixed("m.", messageColumns)).
		TableExpr("unnest(?::bigint[], ?::bigint[], ?::bigint[]) WITH ORDINALITY AS k(topic_id, lo, hi, i)",
			pgdialect.Array(topics), pgdialect.Array(los), pgdialect.Array(his)).
		Join("CROSS JOIN LATERAL (?) AS m", inner).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("chunks of %d messages: %w", len(idx), err)
	}
	for i := range rows {
		k := idx[rows[i].KeyIndex-1]
		if sameLogicalMessage(msgs[k], &rows[i].TopicMessage) {
			out[k] = append(out[k], rows[i].TopicMessage)
		}
	}
	for _, k := range idx {
		c := out[k]
		sort.SliceStable(c, func(a, b int) bool {
			if *c[a].ChunkNum != *c[b].ChunkNum {
				return *c[a].ChunkNum < *c[b].ChunkNum
			}
			return c[a].ConsensusTimestamp < c[b].ConsensusTimestamp
		})
		if c == nil {
			// the message itself is always in its own window; keep the
			// result non-nil for a chunked message whatever happens
			out[k] = []model.TopicMessage{*msgs[k]}
		}
	}
	return out, nil
}

type chunkRow struct {
	bun.BaseModel `bun:"-"`
	KeyIndex      int
	model.TopicMessage
}

// sameLogicalMessage: the same initial transaction id, or for rows without
// one, the same payer and valid start.
func sameLogicalMessage(a, b *model.TopicMessage) bool {
	if a.TopicID != b.TopicID || b.ChunkNum == nil {
		return false
	}
	if a.InitialTransactionID != nil || b.InitialTransactionID != nil {
		return a.InitialTransactionID != nil && b.InitialTransactionID != nil &&
			bytes.Equal(a.InitialTransactionID, b.InitialTransactionID)
	}
	if a.PayerAccountID == nil || b.PayerAccountID == nil || a.ValidStartTimestamp == nil || b.ValidStartTimestamp == nil {
		return a.SequenceNumber == b.SequenceNumber
	}
	return *a.PayerAccountID == *b.PayerAccountID && *a.ValidStartTimestamp == *b.ValidStartTimestamp
}

func entityIDs(ids []model.EntityID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}
