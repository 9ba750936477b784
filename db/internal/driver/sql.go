package driver

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"mirrorql/app"
	"mirrorql/model"
)

// The SQL both layouts' readers share: the pieces their statements are
// made of (the message columns, a page's conditions and the live poll's
// parts), and the SQL text made from model values.

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
// a filter of any mix of conditions comes reduced to one range and one
// exclusion list per column (app.MessageFilter, reduced in app by
// model.RangeOf), so three shapes (the conditions below, FilterBySequence and
// FilterByTimestamp choosing) and two directions serve every page, on either layout
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

// FilterRanges are the ranges of f's page (app.MessageFilter: reduced in
// app, never empty), a column no condition restricts admitting every value.
func FilterRanges(f *app.MessageFilter) (seq, ts model.Range) {
	return rangeOrAll(f.SequenceNumber), rangeOrAll(f.Timestamp)
}

func rangeOrAll(r *model.Range) model.Range {
	if r == nil {
		return model.Unbounded()
	}
	return *r
}

// FilterBySequence: only sequence numbers are filtered, so the page can walk the
// (topic_id, sequence_number) index.
func FilterBySequence(f *app.MessageFilter) bool {
	return f.Timestamp == nil && f.SequenceNumber != nil
}

// FilterByTimestamp: no sequence number is filtered, so the page walks the
// (topic_id, consensus_timestamp) index (the third shape: both filtered).
func FilterByTimestamp(f *app.MessageFilter) bool { return f.SequenceNumber == nil }

// SQL text made from model values. The query layer's statements are fixed
// texts; what varies is chosen among constants here (comparison) or travels
// as a bound value (db's exec.go; arrays as text literals: Int64Array).

// comparison is the SQL operator of a query operator.
func Comparison(o model.Operator) string {
	switch o {
	case model.OpNe:
		return "!="
	case model.OpLt:
		return "<"
	case model.OpLte:
		return "<="
	case model.OpGt:
		return ">"
	case model.OpGte:
		return ">="
	}
	return "="
}

// prefixed qualifies each column of a comma-separated list.
func Prefixed(alias, columns string) string {
	out := make([]byte, 0, len(columns)+32)
	out = append(out, alias...)
	for i := 0; i < len(columns); i++ {
		out = append(out, columns[i])
		if columns[i] == ' ' && i > 0 && columns[i-1] == ',' {
			out = append(out, alias...)
		}
	}
	return string(out)
}

// texts keeps the statement texts made for each key of one kind (a
// partition, a shape and direction, ...): made once, then the same string,
// which is also what pgx caches a connection's prepared statement under.
type Texts[K comparable] struct{ m sync.Map }

// TextsMade is how many texts all the caches hold: each may be a prepared
// statement on every connection of the pool (DB.KeptBytes).
var TextsMade atomic.Int64

// Of is the text kept for k, made by mk the first time it is asked for
// (or the text another caller kept first). mk does not escape: a closure
// passed here stays on the caller's stack.
func (c *Texts[K]) Of(k K, mk func() string) string {
	if s, ok := c.m.Load(k); ok {
		return s.(string)
	}
	got, loaded := c.m.LoadOrStore(k, mk())
	if !loaded {
		TextsMade.Add(1)
	}
	return got.(string)
}

// Direction is the SQL keyword of a sort order.
func Direction(o model.Order) string {
	if o == model.Desc {
		return "DESC"
	}
	return "ASC"
}

// Int64Array is vs as a PostgreSQL array literal ("{1,2}"): a text value
// bound to a bigint[] parameter, one the EXPLAIN tests can write as a
// literal.
func Int64Array[T ~int64](vs []T) string {
	b := make([]byte, 0, 2+len(vs)*20)
	b = append(b, '{')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, '}'))
}

// NotArray is the range's exclusion list as an Int64Array.
func NotArray(r model.Range) string { return Int64Array(r.Not) }

// TextBytes is about what pgx keeps, on conns connections, of the
// statements made from the texts the caches hold (TextsMade): each may be
// prepared on every connection, up to pgx's statement cache capacity.
func TextBytes(conns int) int64 {
	return min(TextsMade.Load(), pgxStatementCache) * int64(conns) * preparedStatementBytes
}

const (
	// pgxStatementCache is pgx's default capacity of a connection's
	// cache of prepared statements (ConnConfig.StatementCacheCapacity).
	pgxStatementCache = 512
	// preparedStatementBytes is about what pgx keeps of one prepared
	// statement (its description: eleven columns, parameter types): 5 MiB
	// in a heap profile of the v2 service with some 270 texts on 16
	// connections.
	preparedStatementBytes = 1200
)

// SQLState is the SQLSTATE of an error the server sent.
func SQLState(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, true
	}
	return "", false
}
