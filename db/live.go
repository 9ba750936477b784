package db

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/model"
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
// BY (livePollEnd), which PostgreSQL does not pull up into the join: a
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
	r := &livePollRows{}
	if err := d.reader().livePoll(ctx, after, topics, limit, r); err != nil {
		return app.Poll{}, fmt.Errorf("live poll of %d topics: %w", len(topics), err)
	}
	p := r.poll
	p.Full = limit > 0 && after != math.MaxInt64 && r.walked >= int64(limit)
	return p, nil
}

// livePollRows reads the rows of a poll's statement into poll.
type livePollRows struct {
	poll      app.Poll
	walked    int64 // submit transactions walked
	headFound bool  // the ledger has a transaction at or after the head floor
}

func (lp *livePollRows) read(rows rowSource) error {
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
		lp.poll.Head, lp.poll.Scanned, lp.walked = model.Timestamp(head.Int64), model.Timestamp(scanned.Int64), n.Int64
		lp.headFound = head.Valid
		if !ts.Valid { // the marks row alone: no message
			continue
		}
		r.ts, r.seq, r.topic = ts.Int64, seq.Int64, topic.Int64
		row := r // the message's nullable fields point into its own copy
		lp.poll.Messages = append(lp.poll.Messages, row.topicMessage())
	}
	return rows.Err()
}
