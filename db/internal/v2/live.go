package v2

import (
	"context"
	"math"
	"strings"
	"time"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// livePollV2SQL is livePollSQL bounded so that PostgreSQL prunes while it
// plans it (it is planned for its values at each poll, one statement per
// interval): the messages' partitions by the watermark, and the ledger's
// head looked for from the last head seen ($4) on, not in every partition.
const livePollV2SQL = driver.LivePollTx + "marks AS (SELECT (SELECT max(consensus_timestamp) FROM transaction " +
	"WHERE consensus_timestamp >= $4) AS head," + driver.LivePollMarks + driver.LivePollRead +
	"WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp AND t.consensus_timestamp > $1" +
	driver.LivePollEnd

// LivePoll is db.LivePoll on the v2 layout. The statement is planned for its
// values (livePollV2SQL), so that the watermark and the last head prune the
// partitions, or, where few partitions can hold what it looks for, names
// them (livePollNamedSQL). On Citus, Citus's.
func (p *Reader) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, r *driver.LivePollRows) error {
	return p.poll(ctx, after, topics, limit, r, postgresPoll{})
}

// livePollStatements are the live poll's statements on a server.
type livePollStatements interface {
	// named is the poll on named partitions (livePollNamedSQL), or "" to
	// send planned.
	named(p *Reader, after, floor, now int64) string
	// planned is the poll planned for its values.
	planned() string
}

type postgresPoll struct{}

func (postgresPoll) named(p *Reader, after, floor, now int64) string {
	return livePollNamedSQL(p, after, floor, now)
}
func (postgresPoll) planned() string { return livePollV2SQL }

// poll sends the live poll, by s's statements. A head floor past every
// transaction (the table was emptied) finds no head, and the poll looks
// again from the start.
func (p *Reader) poll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, r *driver.LivePollRows, s livePollStatements) error {
	var err error
	floor := p.state.head.Load()
	if named := s.named(p, int64(after), floor, time.Now().UnixNano()); named != "" {
		err = p.env.Query(ctx, r.Read, named, int64(after), driver.Int64Array(topics), int64(limit), floor)
	} else {
		err = p.env.QueryPlanned(ctx, r.Read, s.planned(), int64(after), driver.Int64Array(topics), int64(limit), floor)
	}
	if err == nil && !r.HeadFound && floor != 0 {
		r.Poll = app.Poll{}
		err = p.env.QueryPlanned(ctx, r.Read, s.planned(), int64(after), driver.Int64Array(topics), int64(limit), int64(math.MinInt64))
	}
	if err == nil && r.HeadFound {
		p.state.head.Store(int64(r.Poll.Head))
	}
	return err
}

// livePollPartitions is how many partitions of each table a poll reads by
// name at most; a watermark or head further back is planned for its values
// (livePollV2SQL).
const livePollPartitions = 4

// livePollNamedSQL is livePollV2SQL on the partitions that can hold what a
// poll looks for, by name, so that it is prepared once rather than planned
// at every poll (planning it over every partition costs far more than
// running it): the partitions from the one holding the watermark (or the
// last head, when older) on, but for those past next month's that were
// never written. "" when they are too many, the table is not partitioned
// by bounds the catalog can route, or the head is not known yet.
func livePollNamedSQL(p *Reader, after, floor, now int64) string {
	if p == nil || floor == 0 || after == math.MaxInt64 {
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
	return livePollTexts.Of(strings.Join(tx, ",")+"|"+strings.Join(msg, ","), func() string { return livePollNamed(tx, msg) })
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
		read = append(read, "SELECT "+driver.MessageColumns+" FROM "+m+
			" AS t WHERE t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp")
	}
	// GREATEST skips nulls: the head is null only when no partition has a
	// transaction at or after the floor, as max over the table would be.
	return "WITH tx AS MATERIALIZED (SELECT topic_id, consensus_timestamp FROM (" + strings.Join(walk, " UNION ALL ") +
		") AS w ORDER BY consensus_timestamp LIMIT $3), marks AS (SELECT GREATEST(" + strings.Join(head, ", ") + ") AS head," +
		driver.LivePollMarks +
		strings.Join(read, " UNION ALL ") + driver.LivePollEnd
}

var livePollTexts driver.Texts[string] // the partitions' names → livePollNamedSQL

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
