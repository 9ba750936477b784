package graph

import (
	"errors"

	"mirrorql/db"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// messageOrNull maps a single-message lookup: not found is null.
func messageOrNull(m *model.TopicMessage, err error) (*view.TopicMessage, error) {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, dbError(err)
	}
	return &view.TopicMessage{M: m}, nil
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
