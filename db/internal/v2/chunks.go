package v2

import (
	"context"
	"math"
	"sort"

	"mirrorql/app"
	"mirrorql/model"
)

// Chunks is the statement part of ChunksOf on the v2 layout: the
// windows of sequence numbers of each topic, merged where they overlap or
// meet (the windows of a page's messages mostly do), each read as one page
// of its topic in sequence order; rows carry the (1-based) windows they were
// asked for, a row in several windows once for each.
func (p *Reader) Chunks(ctx context.Context, topics, los, his []int64) (rows []model.TopicMessage, of []int64, err error) {
	order := make([]int, len(topics))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if topics[x] != topics[y] {
			return topics[x] < topics[y]
		}
		return los[x] < los[y]
	})
	for start := 0; start < len(order); {
		first := order[start]
		topic, lo, hi := topics[first], los[first], his[first]
		end := start + 1
		for end < len(order) && topics[order[end]] == topic && los[order[end]] <= hi+1 {
			hi = max(hi, his[order[end]])
			end++
		}
		page, err := p.messagesOfTopic(ctx, app.MessageFilter{TopicID: model.EntityID(topic), Limit: int(min(hi-lo+1, math.MaxInt32)),
			SequenceNumber: &model.Range{Lo: lo, Hi: hi}})
		if err != nil {
			return nil, nil, err
		}
		for _, m := range page {
			if m.ChunkNum == nil {
				continue
			}
			for _, k := range order[start:end] {
				if los[k] <= m.SequenceNumber && m.SequenceNumber <= his[k] {
					rows, of = append(rows, m), append(of, int64(k+1))
				}
			}
		}
		start = end
	}
	return rows, of, nil
}
