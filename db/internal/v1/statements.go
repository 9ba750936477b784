package v1

import "mirrorql/db/internal/driver"

// The v1 layout's statements (Reader, reader.go): plain tables, each
// question one statement, a batch one statement over unnest(…). The pieces
// both layouts' statements are made of are driver's (sql.go: the
// message columns, the page conditions, the live poll's pieces).

// The point lookups of a message are fixed texts with parameters, each
// prepared once per connection (see Options.Prepare), so that a lookup costs
// the server an execution, not a parse and a plan.
const (
	messageBySequenceSQL = "SELECT " + driver.MessageColumns + " FROM topic_message WHERE topic_id = $1 AND sequence_number = $2"

	// The transaction's primary key, then the (topic_id, consensus_timestamp)
	// index; a second row would make the answer ambiguous, hence LIMIT 2.
	messageByTimestampSQL = "SELECT " + driver.MessageColumnsM + " " +
		"FROM transaction AS t JOIN topic_message AS m " +
		"ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp " +
		"WHERE t.consensus_timestamp = $1 AND t.result = 22 AND t.type = 27 LIMIT 2"

	// The same lookups for many keys at once: the coalescers' batches and
	// GraphQL's Topic.message loader. Each key is one probe of the index the
	// single lookup uses (the EXPLAIN test checks the generic plan too).
	messagesBySequenceSQL = "SELECT " + driver.MessageColumnsM + " " +
		"FROM unnest($1::bigint[], $2::bigint[]) AS k(topic_id, sequence_number) JOIN topic_message AS m " +
		"ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number"
	messagesByTimestampSQL = "SELECT " + driver.MessageColumnsM + " " +
		"FROM unnest($1::bigint[]) AS k(consensus_timestamp) " +
		"JOIN transaction AS t ON t.consensus_timestamp = k.consensus_timestamp " +
		"JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp " +
		"WHERE t.result = 22 AND t.type = 27"
)

// The page statements (driver's sql.go tells their shapes) come in two
// forms that differ only in where the topic comes from: $1 is the topic
// (REST, the live streams) or an array of topics, each of which gets the
// same page in a LATERAL join (GraphQL's Topic.messages for a page of
// topics).
const (
	pageOfTopic  = "SELECT " + driver.MessageColumns + " FROM topic_message WHERE topic_id = $1"
	pageOfTopics = "SELECT " + driver.MessageColumnsM + " FROM unnest($1::bigint[]) AS k(id) CROSS JOIN LATERAL (" +
		"SELECT " + driver.MessageColumns + " FROM topic_message WHERE topic_id = k.id"

	// pageOfTopics' rows: grouped by topic, each topic's in the page's order.
	pagesBySequenceAsc   = ") AS m ORDER BY m.topic_id, m.sequence_number ASC"
	pagesBySequenceDesc  = ") AS m ORDER BY m.topic_id, m.sequence_number DESC"
	pagesByTimestampAsc  = ") AS m ORDER BY m.topic_id, m.consensus_timestamp ASC"
	pagesByTimestampDesc = ") AS m ORDER BY m.topic_id, m.consensus_timestamp DESC"

	messagePageBySequenceAsc   = pageOfTopic + driver.PageSequenceRange + " ORDER BY sequence_number ASC LIMIT $5"
	messagePageBySequenceDesc  = pageOfTopic + driver.PageSequenceRange + " ORDER BY sequence_number DESC LIMIT $5"
	messagePageByTimestampAsc  = pageOfTopic + driver.PageTimestampRange + " ORDER BY consensus_timestamp ASC LIMIT $5"
	messagePageByTimestampDesc = pageOfTopic + driver.PageTimestampRange + " ORDER BY consensus_timestamp DESC LIMIT $5"
	messagePageMixedAsc        = pageOfTopic + driver.PageBothRanges + " ORDER BY consensus_timestamp ASC LIMIT $8"
	messagePageMixedDesc       = pageOfTopic + driver.PageBothRanges + " ORDER BY consensus_timestamp DESC LIMIT $8"

	messagePagesBySequenceAsc = pageOfTopics + driver.PageSequenceRange + " ORDER BY sequence_number ASC LIMIT $5" +
		pagesBySequenceAsc
	messagePagesBySequenceDesc = pageOfTopics + driver.PageSequenceRange + " ORDER BY sequence_number DESC LIMIT $5" +
		pagesBySequenceDesc
	messagePagesByTimestampAsc = pageOfTopics + driver.PageTimestampRange + " ORDER BY consensus_timestamp ASC LIMIT $5" +
		pagesByTimestampAsc
	messagePagesByTimestampDesc = pageOfTopics + driver.PageTimestampRange + " ORDER BY consensus_timestamp DESC LIMIT $5" +
		pagesByTimestampDesc
	messagePagesMixedAsc = pageOfTopics + driver.PageBothRanges + " ORDER BY consensus_timestamp ASC LIMIT $8" +
		pagesByTimestampAsc
	messagePagesMixedDesc = pageOfTopics + driver.PageBothRanges + " ORDER BY consensus_timestamp DESC LIMIT $8" +
		pagesByTimestampDesc
)

// chunksSQL: the chunked messages in each window ($1 topics, $2 lows, $3
// highs), each row with the (1-based) index of its window; a range scan of
// the (topic_id, sequence_number) index per window, never a scan of the
// topic.
const chunksSQL = "SELECT k.i, " + driver.MessageColumnsM + " " +
	"FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS k(topic_id, lo, hi, i) " +
	"CROSS JOIN LATERAL (SELECT " + driver.MessageColumns + " FROM topic_message " +
	"WHERE topic_id = k.topic_id AND sequence_number BETWEEN k.lo AND k.hi AND chunk_num IS NOT NULL) AS m"

const (
	// latestMessagesSQL: the newest message of each topic, a backward step
	// on the (topic_id, sequence_number) index each.
	latestMessagesSQL = "SELECT " + driver.MessageColumnsM + " FROM unnest($1::bigint[]) AS k(topic_id) " +
		"CROSS JOIN LATERAL (SELECT " + driver.MessageColumns + " FROM topic_message AS t WHERE t.topic_id = k.topic_id " +
		"ORDER BY t.sequence_number DESC LIMIT 1) AS m"

	// activitySQL: for each boundary, the first sequence number at or after
	// it; 0 for every boundary of a topic without messages.
	activitySQL = "WITH last AS (SELECT sequence_number FROM topic_message WHERE topic_id = $1 " +
		"ORDER BY sequence_number DESC LIMIT 1) " +
		"SELECT coalesce((SELECT t.sequence_number FROM topic_message AS t WHERE t.topic_id = $1 " +
		"AND t.consensus_timestamp >= b.ts ORDER BY t.consensus_timestamp LIMIT 1), " +
		"(SELECT sequence_number + 1 FROM last), 0) " +
		"FROM unnest($2::bigint[]) WITH ORDINALITY AS b(ts, i) ORDER BY b.i"
)

// livePollSQL is the live poll's statement on the plain tables (driver's sql.go
// tells how it is made): the ledger's head is the newest transaction of the
// whole table.
const livePollSQL = driver.LivePollTx + "marks AS (SELECT (SELECT max(consensus_timestamp) FROM transaction) AS head," +
	driver.LivePollMarks + driver.LivePollRead + "WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp" + driver.LivePollEnd
