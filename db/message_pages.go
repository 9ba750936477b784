package db

import (
	"context"
	"fmt"

	"mirrorql/app"
	"mirrorql/model"
)

// A page of a topic's messages is one of a few fixed texts with parameters:
// a filter of any mix of conditions is reduced to one range and one
// exclusion list per column (model.RangeOf), so three shapes and two
// directions serve every page. Each text comes in two forms that differ only
// in where the topic comes from: $1 is the topic (REST, the live streams) or
// an array of topics, each of which gets the same page in a LATERAL join
// (GraphQL's Topic.messages for a page of topics).
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
	pageOfTopic  = "SELECT " + messageColumns + " FROM topic_message WHERE topic_id = $1"
	pageOfTopics = "SELECT " + messageColumnsM + " FROM unnest($1::bigint[]) AS k(id) CROSS JOIN LATERAL (" +
		"SELECT " + messageColumns + " FROM topic_message WHERE topic_id = k.id"

	pageSequenceRange  = " AND sequence_number BETWEEN $2 AND $3 AND sequence_number <> ALL ($4::bigint[])"
	pageTimestampRange = " AND consensus_timestamp BETWEEN $2 AND $3 AND consensus_timestamp <> ALL ($4::bigint[])"
	pageBothRanges     = pageSequenceRange +
		" AND consensus_timestamp BETWEEN $5 AND $6 AND consensus_timestamp <> ALL ($7::bigint[])"

	// pageOfTopics' rows: grouped by topic, each topic's in the page's order.
	pagesBySequenceAsc   = ") AS m ORDER BY m.topic_id, m.sequence_number ASC"
	pagesBySequenceDesc  = ") AS m ORDER BY m.topic_id, m.sequence_number DESC"
	pagesByTimestampAsc  = ") AS m ORDER BY m.topic_id, m.consensus_timestamp ASC"
	pagesByTimestampDesc = ") AS m ORDER BY m.topic_id, m.consensus_timestamp DESC"

	messagePageBySequenceAsc   = pageOfTopic + pageSequenceRange + " ORDER BY sequence_number ASC LIMIT $5"
	messagePageBySequenceDesc  = pageOfTopic + pageSequenceRange + " ORDER BY sequence_number DESC LIMIT $5"
	messagePageByTimestampAsc  = pageOfTopic + pageTimestampRange + " ORDER BY consensus_timestamp ASC LIMIT $5"
	messagePageByTimestampDesc = pageOfTopic + pageTimestampRange + " ORDER BY consensus_timestamp DESC LIMIT $5"
	messagePageMixedAsc        = pageOfTopic + pageBothRanges + " ORDER BY consensus_timestamp ASC LIMIT $8"
	messagePageMixedDesc       = pageOfTopic + pageBothRanges + " ORDER BY consensus_timestamp DESC LIMIT $8"

	messagePagesBySequenceAsc = pageOfTopics + pageSequenceRange + " ORDER BY sequence_number ASC LIMIT $5" +
		pagesBySequenceAsc
	messagePagesBySequenceDesc = pageOfTopics + pageSequenceRange + " ORDER BY sequence_number DESC LIMIT $5" +
		pagesBySequenceDesc
	messagePagesByTimestampAsc = pageOfTopics + pageTimestampRange + " ORDER BY consensus_timestamp ASC LIMIT $5" +
		pagesByTimestampAsc
	messagePagesByTimestampDesc = pageOfTopics + pageTimestampRange + " ORDER BY consensus_timestamp DESC LIMIT $5" +
		pagesByTimestampDesc
	messagePagesMixedAsc = pageOfTopics + pageBothRanges + " ORDER BY consensus_timestamp ASC LIMIT $8" +
		pagesByTimestampAsc
	messagePagesMixedDesc = pageOfTopics + pageBothRanges + " ORDER BY consensus_timestamp DESC LIMIT $8" +
		pagesByTimestampDesc
)

// MessagesOfTopic is one page of a topic's messages. Within a topic, sequence
// order and consensus order agree, so when only sequence numbers are filtered
// the page walks the (topic_id, sequence_number) index instead of filtering a
// timestamp scan; otherwise it walks (topic_id, consensus_timestamp).
func (d *DB) MessagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	rows, err := d.reader().messagesOfTopic(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("messages of topic %s: %w", f.TopicID, err)
	}
	return rows, nil
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

// pageStatements are the page statements of an order, for one topic or for
// an array of topics (many).
func pageStatements(many bool, o model.Order) (bySeq, byTs, mixed string) {
	switch {
	case !many && o != model.Desc:
		return messagePageBySequenceAsc, messagePageByTimestampAsc, messagePageMixedAsc
	case !many:
		return messagePageBySequenceDesc, messagePageByTimestampDesc, messagePageMixedDesc
	case o != model.Desc:
		return messagePagesBySequenceAsc, messagePagesByTimestampAsc, messagePagesMixedAsc
	}
	return messagePagesBySequenceDesc, messagePagesByTimestampDesc, messagePagesMixedDesc
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
