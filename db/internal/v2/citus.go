package v2

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// citusServer is v2Server on a Citus coordinator, and Citus the v2
// reader there (docs/layouts.md, "Citus"),
// the mirror node's v2 layout as mainnet runs it: every table mirrorql reads
// is distributed and co-located with entity, topic_message and
// topic_message_lookup by topic_id, transaction by payer_account_id,
// transaction_signature by entity_id; topic_message and transaction are
// also partitioned by month, each partition distributed likewise.
//
// What that changes for a read:
//
//   - A statement that filters topic_message on one topic_id is routed to
//     the shard that holds the topic and runs on its worker, where a
//     catalog function reads the worker's catalog: a partition's storage
//     there is the shard's, not the coordinator's. So no statement carries
//     its partition's check; the check is a statement of its own, sent in
//     the same round trip, which Citus runs on the coordinator alone.
//   - transaction is not co-located with topic_message: a message by
//     timestamp reads the submit transaction first, then the topic's message
//     (as the mirror node's REST API reads it on Citus), and batches of
//     lookups are a statement per topic rather than over unnest.
//   - The coordinator's partitions hold no rows: it cannot tell which future
//     month holds messages, so the tail is one window bounded by time and
//     routed by Citus, and the live poll is planned for its values.
type citusServer struct{}

// checkColumn is a constant: the check is checked's statement.
func (citusServer) checkColumn(*partition) string { return "0::bigint" }

// checked pipelines ps and, after them, each named partition's check on
// the coordinator (checkPartitionSQL): its value replaces the statement's.
func (citusServer) checked(ctx context.Context, x driver.Exec, ps []driver.Piped, parts []*partition, checks []*int64) error {
	all := append(make([]driver.Piped, 0, 2*len(ps)), ps...)
	for i, part := range parts {
		c := checks[i]
		if part.name == "" {
			*c = -1
			continue
		}
		all = append(all, driver.Piped{SQL: checkPartitionSQL, Args: []any{part.name},
			Read: func(rows driver.RowSource) error { return driver.ScanOne(rows, c) }})
	}
	return x.Pipeline(ctx, all)
}

func (citusServer) sizesKnown() bool { return false }

func (citusServer) reader(p *Reader) driver.Reader { return Citus{p} }

// Citus is the v2 reader on a Citus coordinator: the v2 reader embedded,
// its reads but for those below, which the coordinator answers otherwise,
// overridden. driver.Reader dispatches to these; the v2 reader's own code
// never calls them.
type Citus struct{ *Reader }

// MessageByTimestamp: the submit transaction's topic (a statement to every
// shard: transaction is distributed by payer), then that topic's message at
// the time, routed to its shard.
func (c Citus) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	p := c.Reader
	var topics []int64
	read := func(rows driver.RowSource) error {
		for rows.Next() {
			var t pgtype.Int8
			if err := rows.Scan(&t); err != nil {
				return err
			}
			topics = append(topics, t.Int64)
		}
		return rows.Err()
	}
	tx := p.transactions.at(int64(ts))
	var err error
	if tx.name == "" {
		err = p.env.QueryPlanned(ctx, read, submitTopicV2SQL(tx), int64(ts))
	} else {
		err = p.env.Query(ctx, read, submitTopicV2SQL(tx), int64(ts))
	}
	if err != nil {
		return nil, err
	}
	if len(topics) != 1 {
		return nil, app.ErrNotFound
	}
	rows, err := p.messagesOfTopic(ctx, app.MessageFilter{TopicID: model.EntityID(topics[0]), Limit: 2,
		Timestamp: &model.Range{Lo: int64(ts), Hi: int64(ts)}})
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, app.ErrNotFound
	}
	return &rows[0], nil
}

// MessagesByTimestamp: one by one, two statements each.
func (c Citus) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	return batchV2(ctx, stamps, c.MessageByTimestamp)
}

// submitTopicV2SQL: the topic of the successful submit at a time, read
// apart from topic_message.
func submitTopicV2SQL(tx *partition) string {
	table := tx.name
	if table == "" {
		table = "transaction"
	}
	return "SELECT entity_id FROM " + table + " WHERE consensus_timestamp = $1 AND result = 22 AND type = 27 LIMIT 2"
}

// MessagesBySequence: a statement per partition and topic, since one over
// several topics would go to every shard.
func (c Citus) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	return c.bySequence(ctx, keys, byPartitionAndTopic{})
}

// byPartitionAndTopic: a statement per partition and topic, routed to the
// topic's shard.
type byPartitionAndTopic struct{}

func (byPartitionAndTopic) group(k app.TopicSequence) model.EntityID { return k.TopicID }

func (byPartitionAndTopic) batch(part *partition, topics, seqs []int64) (string, []any) {
	return bySequenceTopicSQL(part), []any{topics[0], driver.Int64Array(seqs)}
}

// bySequenceTopicSQL is bySequenceBatchSQL for one topic's sequence numbers,
// routed to that topic's shard.
func bySequenceTopicSQL(part *partition) string { return topicBatchTexts.of(part) }

var topicBatchTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + driver.MessageColumnsM + " FROM topic_message" +
		" AS m WHERE m.topic_id = $1 AND m.sequence_number = ANY ($2::bigint[])" + part.within("m.consensus_timestamp")
}}

// LivePoll: always planned, and as Citus can run it (livePollCitusSQL): the
// partitions that may hold the poll's rows are not known (sizesKnown).
func (c Citus) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, r *driver.LivePollRows) error {
	return c.poll(ctx, after, topics, limit, r, citusPoll{})
}

// citusPoll: never on named partitions.
type citusPoll struct{}

func (citusPoll) named(*Reader, int64, int64, int64) string { return "" }
func (citusPoll) planned() string                           { return livePollCitusSQL }

// livePollCitusSQL is livePollV2SQL as Citus can run it. Citus refuses a
// LATERAL probe of a distributed table from a CTE's rows inside an outer
// join; it plans each CTE on its own instead: the submits past the
// watermark (every shard of transaction, which is distributed by payer),
// the marks, then the subscribed topics' messages at those submits'
// times, a join of topic_message (its shards of those topics, bounded by
// the watermark) with the submits' rows, which Citus sends to the workers;
// the coordinator joins the marks to the messages.
const livePollCitusSQL = driver.LivePollTx + "marks AS MATERIALIZED (SELECT (SELECT max(consensus_timestamp) FROM transaction " +
	"WHERE consensus_timestamp >= $4) AS head, (SELECT max(consensus_timestamp) FROM tx) AS scanned, (SELECT count(*) FROM tx) AS walked), " +
	"m AS MATERIALIZED (SELECT t.* FROM topic_message AS t JOIN tx ON t.topic_id = tx.topic_id AND t.consensus_timestamp = tx.consensus_timestamp " +
	"WHERE t.topic_id = ANY ($2::bigint[]) AND t.consensus_timestamp > $1) " +
	"SELECT marks.head, marks.scanned, marks.walked, " + driver.MessageColumnsM + " FROM marks LEFT JOIN m ON true ORDER BY m.consensus_timestamp"

// tail: one window on the parent from parts[from] on, bounded by time.
func (citusServer) tail(parts []partition, from int, below, _ int64, _ *int64) []window {
	if from >= len(parts) {
		return nil
	}
	return []window{{part: -1, lo: parts[from].lo, hi: math.MaxInt64, seqLo: below, seqHi: math.MaxInt64, why: whyTail, rows: -1}}
}
