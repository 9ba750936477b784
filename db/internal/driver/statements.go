package driver

import (
	"mirrorql/app"
	"mirrorql/model"
)

// The statements' pieces both layouts' readers make theirs of: the message
// columns, a page's conditions and the live poll's parts.

// MessageColumns are the topic_message columns every message statement
// selects, in the order ScanMessages reads them.
const MessageColumns = "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, " +
	"chunk_num, chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"

// MessageColumnsM is MessageColumns of the alias m, spelled out because a
// constant cannot call prefixed (a test keeps the two lists the same).
const MessageColumnsM = "m.consensus_timestamp, m.message, m.running_hash, m.sequence_number, " +
	"m.running_hash_version, m.chunk_num, m.chunk_total, m.payer_account_id, m.valid_start_timestamp, " +
	"m.topic_id, m.initial_transaction_id"

// A page of a topic's messages is one of a few fixed texts with parameters:
// a filter of any mix of conditions is reduced to one range and one
// exclusion list per column (model.RangeOf), so three shapes (the
// conditions below) and two directions serve every page, on either layout
// (v1's statements in db/internal/v1, v2's by partition in db/internal/v2's
// pages.go).
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
	PageSequenceRange  = " AND sequence_number BETWEEN $2 AND $3 AND sequence_number <> ALL ($4::bigint[])"
	PageTimestampRange = " AND consensus_timestamp BETWEEN $2 AND $3 AND consensus_timestamp <> ALL ($4::bigint[])"
	PageBothRanges     = PageSequenceRange +
		" AND consensus_timestamp BETWEEN $5 AND $6 AND consensus_timestamp <> ALL ($7::bigint[])"
)

// The live poll's statement, the one the live poller sends per interval for
// every subscribed topic at once, is made of these pieces on either layout
// (v1's livePollSQL, v2's livePollV2SQL and livePollNamedSQL, Citus's
// livePollCitusSQL). topic_message has no index on consensus_timestamp
// alone, so the new messages are found as the mirror node's shared poller
// finds them: on transaction's (type, consensus_timestamp) index,
// ConsensusSubmitMessage (27) past the watermark, SUCCESS (22), of the
// subscribed topics; each is then one probe of topic_message's (topic_id,
// consensus_timestamp) index. The probe is a LATERAL subquery with an ORDER
// BY (LivePollEnd), which PostgreSQL does not pull up into the join: a
// generic plan does not know the limit and takes the walk for a tenth of
// every submit after any watermark, and a planner that knows the CTE's
// columns (17 and later) then finds hashing those rows against a sequential
// scan of topic_message cheaper than as many probes. Kept a subquery, it has
// no join to choose. The ledger's head (the newest transaction of any kind,
// a backward step on the primary key) comes with it: it tells subscribers
// with an end time that no message before that time can still arrive. The
// marks row is there even when no message is, hence the LEFT JOIN; it
// counts the transactions walked, so that a walk cut short by its limit is
// told from one that reached the head.
const (
	LivePollTx = "WITH tx AS MATERIALIZED (" +
		"SELECT entity_id AS topic_id, consensus_timestamp FROM transaction" +
		" WHERE type = 27 AND consensus_timestamp > $1 AND result = 22 AND entity_id = ANY ($2::bigint[])" +
		" ORDER BY consensus_timestamp LIMIT $3), "
	LivePollMarks = " (SELECT max(consensus_timestamp) FROM tx) AS scanned, (SELECT count(*) FROM tx) AS walked) " +
		"SELECT marks.head, marks.scanned, marks.walked, " + MessageColumnsM + " FROM marks LEFT JOIN (tx CROSS JOIN LATERAL ("
	LivePollRead = "SELECT " + MessageColumns + " FROM topic_message AS t "
	LivePollEnd  = " ORDER BY consensus_timestamp) AS m) ON true ORDER BY m.consensus_timestamp"
)

// FilterRanges reduces the filter's conditions; ok is false when they admit no message.
func FilterRanges(f *app.MessageFilter) (seq, ts model.Range, ok bool) {
	seq, okSeq := model.RangeOf(f.SequenceNumber)
	ts, okTs := model.RangeOf(f.Timestamp)
	return seq, ts, okSeq && okTs
}

// FilterBySequence: only sequence numbers are filtered, so the page can walk the
// (topic_id, sequence_number) index.
func FilterBySequence(f *app.MessageFilter) bool {
	return len(f.Timestamp) == 0 && len(f.SequenceNumber) > 0
}
