package graph

import (
	"context"

	"mirrorql/app"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// messageBySequence is Query.topicMessage, REST's by-sequence route, apart
// from gqlgen (compiled operations run it too): the argument errors in
// REST's order, or the message, nil when there is none.
func (r *Resolver) messageBySequence(ctx context.Context, topicID view.EntityIDArg, sequenceNumber view.LongArg) (*view.TopicMessage, argErrors, error) {
	var errs argErrors
	app.CheckTopicID(&errs, string(topicID))
	seq, ok := model.ParseSequenceNumber(string(sequenceNumber))
	if !ok {
		errs.add(invalidParameter("sequencenumber"))
	}
	if len(errs) > 0 {
		return nil, errs, nil
	}
	topic, err := r.rules.TopicID(string(topicID))
	if err != nil {
		return nil, nil, fieldError(ctx, err)
	}
	m, err := messageOrNull(r.store.MessageBySequence(ctx, topic, seq))
	return m, nil, err
}

// messageByTimestamp is Query.topicMessageByTimestamp, REST's by-timestamp
// route, apart from gqlgen.
func (r *Resolver) messageByTimestamp(ctx context.Context, consensusTimestamp view.TimestampArg) (*view.TopicMessage, error) {
	ts, err := model.ParseTimestamp(string(consensusTimestamp))
	if err != nil {
		return nil, badInput(invalidParameter("consensus_timestamp"))
	}
	return messageOrNull(r.store.MessageByTimestamp(ctx, ts))
}

// messageOrNull maps a single-message lookup: not found is null.
func messageOrNull(m *model.TopicMessage, err error) (*view.TopicMessage, error) {
	switch {
	case app.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &view.TopicMessage{Row: m}, nil
}

// joinChunks joins the bytes of chunks 1..total, taking the first chunk of
// each number (they arrive in chunk order); ok is false while one is missing.
func joinChunks(chunks []model.TopicMessage, total *int32) (full []byte, ok bool) {
	if total == nil || *total < 1 {
		return nil, false
	}
	next := int32(1)
	for i := range chunks {
		c := &chunks[i]
		switch {
		case *c.ChunkNum < next:
			continue // a duplicate of a number already taken
		case *c.ChunkNum > next:
			return nil, false
		}
		full = append(full, c.Message...)
		if next == *total {
			return full, true
		}
		next++
	}
	return nil, false
}
