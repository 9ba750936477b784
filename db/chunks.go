package db

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"mirrorql/model"
)

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
// statement for the whole batch.
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
	rows, of, err := d.reader().Chunks(ctx, topics, los, his)
	if err != nil {
		return nil, fmt.Errorf("chunks of %d messages: %w", len(idx), err)
	}
	for i := range rows {
		k := idx[of[i]-1]
		if sameLogicalMessage(msgs[k], &rows[i]) {
			out[k] = append(out[k], rows[i])
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
