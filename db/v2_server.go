package db

import (
	"context"
	"math"

	"mirrorql/app"
	"mirrorql/model"
)

// v2Server is what the v2 reader (v2_reader.go) does differently on the two
// servers a v2 database lives on:
//
//   - one PostgreSQL server (postgresServer): a statement runs where the
//     catalog was read, and topic_message and transaction may be joined;
//   - a Citus coordinator (citusServer, v2_citus.go): a statement on a
//     distributed table runs on the worker that holds its shard, against
//     that worker's catalog, topic_message is distributed by topic and
//     transaction by payer, and the coordinator's partitions hold no rows.
//
// newReader chooses one with the reader, where the layout is learned; the
// reads call it and never ask which they have.
type v2Server interface {
	// checkColumn is the first column of a statement that reads through
	// partition p: p's storage where the statement runs against the catalog
	// the reader read, a constant where it may not (the check then comes
	// from checked).
	checkColumn(p *partition) string
	// checked sends ps, statements each of which reads through partition
	// parts[i] and returns its checkColumn first, scanned into checks[i];
	// on return each check holds its partition's storage as the server
	// whose catalog was read sees it now (checkSQL's value; -1 for the
	// table itself).
	checked(ctx context.Context, d *DB, ps []piped, parts []*partition, checks []*int64) error
	// sizesKnown: the catalog's partition sizes are their rows' (not on a
	// coordinator, whose partitions hold none: the shards do).
	sizesKnown() bool

	// messageByTimestamp is the reader's MessageByTimestamp, and
	// messagesByTimestamp its batch.
	messageByTimestamp(ctx context.Context, p *v2Reader, ts model.Timestamp) (*model.TopicMessage, error)
	messagesByTimestamp(ctx context.Context, p *v2Reader, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error)
	// bySequenceGroup is the topic a batch of lookups by sequence number
	// is grouped by beside the partition (0: every topic together), and
	// bySequenceBatch the statement of such a group of several keys.
	bySequenceGroup(k app.TopicSequence) model.EntityID
	bySequenceBatch(part *partition, topics, seqs []int64) (sql string, args []any)
	// livePollNamed is the live poll's statement on named partitions
	// (livePollNamedSQL), or "" to send livePollPlanned, planned for its
	// values.
	livePollNamed(p *v2Reader, after, floor, now int64) string
	livePollPlanned() string
	// tail is the windows past a topic's newest segment: the partitions
	// from parts[from] on, with sequence numbers from below; until is cut
	// to the first partition the tail leaves out.
	tail(parts []partition, from int, below, now int64, until *int64) []window
}

// postgresServer is v2Server on one PostgreSQL server.
type postgresServer struct{}

// checkColumn is checkSQL of p, or -1 for the table itself.
func (postgresServer) checkColumn(p *partition) string {
	if p.name == "" {
		return "-1::bigint"
	}
	return checkSQL(p)
}

// checked: each statement returned the check itself.
func (postgresServer) checked(ctx context.Context, d *DB, ps []piped, _ []*partition, _ []*int64) error {
	return d.pipeline(ctx, ps)
}

func (postgresServer) sizesKnown() bool { return true }

func (postgresServer) messageByTimestamp(ctx context.Context, p *v2Reader, ts model.Timestamp) (*model.TopicMessage, error) {
	return p.messageByTimestampJoined(ctx, ts)
}

func (postgresServer) messagesByTimestamp(ctx context.Context, p *v2Reader, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	return p.messagesByTimestampPiped(ctx, stamps)
}

func (postgresServer) bySequenceGroup(app.TopicSequence) model.EntityID { return 0 }

func (postgresServer) bySequenceBatch(part *partition, topics, seqs []int64) (string, []any) {
	return bySequenceBatchSQL(part), []any{int64Array(topics), int64Array(seqs)}
}

func (postgresServer) livePollNamed(p *v2Reader, after, floor, now int64) string {
	return livePollNamedSQL(p, after, floor, now)
}

func (postgresServer) livePollPlanned() string { return livePollV2SQL }

// tail: partition by partition, those that are current or past, and later
// ones that held rows when the catalog was read (test data; the importer
// writes the present).
func (postgresServer) tail(parts []partition, from int, below, now int64, until *int64) []window {
	var out []window
	for i := from; i < len(parts); i++ {
		if parts[i].lo > now && parts[i].empty {
			*until = min(*until, parts[i].lo)
			continue
		}
		out = append(out, window{part: int32(i), lo: parts[i].lo, hi: parts[i].hi, seqLo: below, seqHi: math.MaxInt64, rows: -1}) //nolint:gosec // a partition index
	}
	return out
}
