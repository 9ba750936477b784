package db

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/model"
)

// livePollSQL is the one statement the live poller sends per interval for
// every subscribed topic at once. topic_message has no index on
// consensus_timestamp alone, so the new messages are found as the mirror
// node's shared poller finds them: on transaction's (type,
// consensus_timestamp) index, ConsensusSubmitMessage (27) past the
// watermark, SUCCESS (22), of the subscribed topics; each is then one probe
// of topic_message's (topic_id, consensus_timestamp) index. The probe is a
// LATERAL subquery with an ORDER BY (livePollEnd), which PostgreSQL does not
// pull up into the join: a generic plan does not know the limit and takes
// the walk for a tenth of every submit after any watermark, and a planner
// that knows the CTE's columns (17 and later) then finds hashing those rows
// against a sequential scan of topic_message cheaper than as many probes.
// Kept a subquery, it has no join to choose. The ledger's head (the
// newest transaction of any kind, a backward step on the primary key) comes
// with it: it tells subscribers with an end time that no message before
// that time can still arrive. The marks row is there even when no message
// is, hence the LEFT JOIN; it counts the transactions walked, so that a walk
// cut short by its limit is told from one that reached the head.
const livePollSQL = livePollTx + "marks AS (SELECT (SELECT max(consensus_timestamp) FROM transaction) AS head," +
	livePollMarks + livePollRead + "WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp" + livePollEnd

// livePollV2SQL is livePollSQL bounded so that PostgreSQL prunes while it
// plans it (it is planned for its values at each poll, one statement per
// interval): the messages' partitions by the watermark, and the ledger's
// head looked for from the last head seen ($4) on, not in every partition.
const livePollV2SQL = livePollTx + "marks AS (SELECT (SELECT max(consensus_timestamp) FROM transaction " +
	"WHERE consensus_timestamp >= $4) AS head," + livePollMarks + livePollRead +
	"WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp AND t.consensus_timestamp > $1" +
	livePollEnd

const (
	livePollTx = "WITH tx AS MATERIALIZED (" +
		"SELECT entity_id AS topic_id, consensus_timestamp FROM transaction" +
		" WHERE type = 27 AND consensus_timestamp > $1 AND result = 22 AND entity_id = ANY ($2::bigint[])" +
		" ORDER BY consensus_timestamp LIMIT $3), "
	livePollMarks = " (SELECT max(consensus_timestamp) FROM tx) AS scanned, (SELECT count(*) FROM tx) AS walked) " +
		"SELECT marks.head, marks.scanned, marks.walked, " + messageColumnsM + " FROM marks LEFT JOIN (tx CROSS JOIN LATERAL ("
	livePollRead = "SELECT " + messageColumns + " FROM topic_message AS t "
	livePollEnd  = " ORDER BY consensus_timestamp) AS m) ON true ORDER BY m.consensus_timestamp"
)

// LivePoll finds the messages of topics whose submit transaction is after
// the watermark, at most limit of them. A watermark of model.Timestamp
// math.MaxInt64 finds none and only reads the ledger's head.
func (d *DB) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int) (app.Poll, error) {
	var (
		p         app.Poll
		walked    int64 // submit transactions walked
		headFound bool  // the ledger has a transaction at or after the head floor
	)
	read := func(rows rowSource) error {
		var (
			head, scanned, n, ts, seq, topic pgtype.Int8
			r                                messageRow
		)
		dest := append([]any{&head, &scanned, &n}, r.columns(&ts, &seq, &topic)...)
		for rows.Next() {
			r.message, r.hash, r.initial = nil, nil, nil
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			p.Head, p.Scanned, walked = model.Timestamp(head.Int64), model.Timestamp(scanned.Int64), n.Int64
			headFound = head.Valid
			if !ts.Valid { // the marks row alone: no message
				continue
			}
			r.ts, r.seq, r.topic = ts.Int64, seq.Int64, topic.Int64
			row := r // the message's nullable fields point into its own copy
			p.Messages = append(p.Messages, row.topicMessage())
		}
		return rows.Err()
	}
	// The topics travel as an array literal (text), as the point lookups'
	// keys do: the EXPLAIN tests write the statement's values as literals.
	var err error
	if d.v2() != nil {
		// Planned for its values, so that the watermark and the last head
		// prune the partitions; a head floor past every transaction (the
		// table was emptied) finds no head, and the poll looks again from
		// the start.
		floor := d.head.Load()
		if named := livePollNamedSQL(d.v2(), int64(after), floor, time.Now().UnixNano()); named != "" {
			err = d.query(ctx, read, named, int64(after), int64Array(topics), int64(limit), floor)
		} else {
			err = d.queryPlanned(ctx, read, livePollV2SQL, int64(after), int64Array(topics), int64(limit), floor)
		}
		if err == nil && !headFound && floor != 0 {
			p.Messages = p.Messages[:0]
			p = app.Poll{}
			err = d.queryPlanned(ctx, read, livePollV2SQL, int64(after), int64Array(topics), int64(limit), int64(math.MinInt64))
		}
		if err == nil && headFound {
			d.head.Store(int64(p.Head))
		}
	} else {
		err = d.query(ctx, read, livePollSQL, int64(after), int64Array(topics), int64(limit))
	}
	if err != nil {
		return app.Poll{}, fmt.Errorf("live poll of %d topics: %w", len(topics), err)
	}
	p.Full = limit > 0 && after != math.MaxInt64 && walked >= int64(limit)
	return p, nil
}

// livePollPartitions is how many partitions of each table a poll reads by
// name at most; a watermark or head further back is planned for its values
// (livePollV2SQL).
const livePollPartitions = 4

// livePollNamedSQL is livePollV2SQL on the partitions that can hold what a
// poll looks for, by name, so that it is prepared once rather than planned
// at every poll (planning it over every partition cost ten times its
// execution): the partitions from the one holding the watermark (or the
// last head, when older) on, but for those past next month's that were
// never written. "" when they are too many, the table is not partitioned
// by bounds the catalog can route, the head is not known yet, or on Citus.
func livePollNamedSQL(p *partitioned, after, floor, now int64) string {
	if p == nil || p.layout.Citus || floor == 0 || after == math.MaxInt64 {
		return ""
	}
	from := min(after+1, floor)
	tx, ok := livePollSet(&p.transactions, from, now)
	if !ok {
		return ""
	}
	msg, ok := livePollSet(&p.messages, after+1, now)
	if !ok {
		return ""
	}
	return livePollTexts.of(strings.Join(tx, ",")+"|"+strings.Join(msg, ","), func() string { return livePollNamed(tx, msg) })
}

// livePollNamed is livePollNamedSQL's text for the partitions of transaction
// (tx) and topic_message (msg) it reads.
func livePollNamed(tx, msg []string) string {
	var walk, head, read []string
	for _, t := range tx {
		walk = append(walk, "SELECT entity_id AS topic_id, consensus_timestamp FROM "+t+
			" WHERE type = 27 AND consensus_timestamp > $1 AND result = 22 AND entity_id = ANY ($2::bigint[])")
		head = append(head, "(SELECT max(consensus_timestamp) FROM "+t+" WHERE consensus_timestamp >= $4)")
	}
	for _, m := range msg {
		read = append(read, "SELECT "+messageColumns+" FROM "+m+
			" AS t WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp")
	}
	// GREATEST skips nulls: the head is null only when no partition has a
	// transaction at or after the floor, as max over the table would be.
	return "WITH tx AS MATERIALIZED (SELECT topic_id, consensus_timestamp FROM (" + strings.Join(walk, " UNION ALL ") +
		") AS w ORDER BY consensus_timestamp LIMIT $3), marks AS (SELECT GREATEST(" + strings.Join(head, ", ") + ") AS head," +
		livePollMarks +
		strings.Join(read, " UNION ALL ") + livePollEnd
}

var livePollTexts texts[string] // the partitions' names → livePollNamedSQL

// livePollSet is the names of the partitions of set from the one holding
// ts on, but for those after next month's (the partition after the one
// holding now) that were never written; false when ts has no partition or
// they are more than livePollPartitions.
func livePollSet(set *partitionSet, ts, now int64) ([]string, bool) {
	first := set.find(ts)
	if first < 0 {
		return nil, false
	}
	next := set.find(now) + 1
	var names []string
	for i := first; i < len(set.parts); i++ {
		if i > next && next > 0 && set.parts[i].empty {
			continue
		}
		names = append(names, set.parts[i].name)
	}
	return names, len(names) <= livePollPartitions
}
