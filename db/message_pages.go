package db

import (
	"context"
	"fmt"

	"mirrorql/app"
	"mirrorql/model"
)

// MessagesOfTopic is one page of a topic's messages. Within a topic, sequence
// order and consensus order agree, so when only sequence numbers are filtered
// the page walks the (topic_id, sequence_number) index instead of filtering a
// timestamp scan; otherwise it walks (topic_id, consensus_timestamp).
func (d *DB) MessagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	pages, err := d.reader().MessagesOfTopics(ctx, []model.EntityID{f.TopicID}, f)
	if err != nil {
		return nil, fmt.Errorf("messages of topic %s: %w", f.TopicID, err)
	}
	if rows := pages[f.TopicID]; rows != nil {
		return rows, nil
	}
	return []model.TopicMessage{}, nil
}

// MessagesOfTopics is MessagesOfTopic for several topics at once, with the
// same filter, in one statement: each topic gets exactly the page
// MessagesOfTopic gives it. Topics without messages are absent from the map.
func (d *DB) MessagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	out, err := d.reader().MessagesOfTopics(ctx, topics, f)
	if err != nil {
		return nil, fmt.Errorf("messages of %d topics: %w", len(topics), err)
	}
	return out, nil
}
