package db

import (
	"context"
	"fmt"

	"mirrorql/app"
	"mirrorql/model"
)

// A page of a topic's messages is one of a few fixed texts with parameters:
// a filter of any mix of conditions is reduced to one range and one
// exclusion list per column (model.RangeOf), so three shapes (the
// conditions below) and two directions serve every page, on either layout
// (v1's statements in v1_statements.go, v2's by partition in v2_pages.go).
//
// A page ordered by sequence number (only sequence numbers filtered) or by
// consensus timestamp (no sequence number filtered) puts its range and
// exclusion list on the order's own column, so the generic plan of the
// prepared statement walks that column's index whatever the values, and the
// server only executes it. With both columns filtered the best index depends
// on the values (a narrow sequence range wants the sequence index and a
// sort, a wide one the timestamp index), which a generic plan cannot know:
// those statements are planned for their values every time (queryPlanned).
const (
	pageSequenceRange  = " AND sequence_number BETWEEN $2 AND $3 AND sequence_number <> ALL ($4::bigint[])"
	pageTimestampRange = " AND consensus_timestamp BETWEEN $2 AND $3 AND consensus_timestamp <> ALL ($4::bigint[])"
	pageBothRanges     = pageSequenceRange +
		" AND consensus_timestamp BETWEEN $5 AND $6 AND consensus_timestamp <> ALL ($7::bigint[])"
)

// MessagesOfTopic is one page of a topic's messages. Within a topic, sequence
// order and consensus order agree, so when only sequence numbers are filtered
// the page walks the (topic_id, sequence_number) index instead of filtering a
// timestamp scan; otherwise it walks (topic_id, consensus_timestamp).
func (d *DB) MessagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	pages, err := d.reader().messagesOfTopics(ctx, []model.EntityID{f.TopicID}, f)
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
	out, err := d.reader().messagesOfTopics(ctx, topics, f)
	if err != nil {
		return nil, fmt.Errorf("messages of %d topics: %w", len(topics), err)
	}
	return out, nil
}

// filterRanges reduces the filter's conditions; ok is false when they admit no message.
func filterRanges(f *app.MessageFilter) (seq, ts model.Range, ok bool) {
	seq, okSeq := model.RangeOf(f.SequenceNumber)
	ts, okTs := model.RangeOf(f.Timestamp)
	return seq, ts, okSeq && okTs
}

// filterBySequence: only sequence numbers are filtered, so the page can walk the
// (topic_id, sequence_number) index.
func filterBySequence(f *app.MessageFilter) bool {
	return len(f.Timestamp) == 0 && len(f.SequenceNumber) > 0
}
