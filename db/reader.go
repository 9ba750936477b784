package db

import (
	"context"

	"mirrorql/app"
	"mirrorql/model"
)

// reader is what a question asks of the layout: the reads that differ
// between the mirror node's v1 layout (v1Reader, v1_reader.go: plain tables,
// a statement per question) and its v2 layout (v2Reader, v2_reader.go:
// partitioned tables, read through each topic's map). newReader chooses
// one when LearnLayout first learns the layout, and each reader then says
// which follows it when the layout is learned again (next); the exported
// reads call d.reader() and never ask which layout they are in.
// Errors come back unwrapped but where a method says otherwise: the
// exported read names the question. What a reader keeps account of beside
// its answers is bookkeeper's, which only the v2 reader implements.
type reader interface {
	// next is the reader of layout l, just learned (LearnLayout), to follow
	// this one: this one itself when neither l nor what it read of the
	// database (v2: the catalog) changed, so that what it learned since (v2:
	// the topic maps) is kept; else newReader's, handed what outlives a
	// catalog (v2: v2State).
	next(ctx context.Context, l Layout) (reader, error)

	// messagesOfTopics is each topic's page of f (MessagesOfTopic asks
	// for one topic); a topic without messages is absent.
	messagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error)
	latestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error)
	// firsts is, for each boundary, the first sequence number at or after
	// it (the last one plus one past the topic's last message): Activity's
	// counts are their differences.
	firsts(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error)
	// chunks is the chunked messages in the windows of sequence numbers
	// [los[i], his[i]] of topics[i], each row with the (1-based) window it
	// was asked for in of.
	chunks(ctx context.Context, topics, los, his []int64) (rows []model.TopicMessage, of []int64, err error)
	// livePoll sends LivePoll's statement (or statements), its rows read
	// by r.
	livePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, r *livePollRows) error

	// The point lookups (app.ErrNotFound for no message, or several) and
	// their batches, which the coalescers share (point_lookups.go). The
	// batches wrap their errors themselves.
	messageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error)
	messageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error)
	messagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error)
	messagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error)
}

// bookkeeper is what a reader may keep account of beside its answers: the
// v2 reader's partitions, fallbacks and memory. A reader without it (v1's)
// keeps none of them: each count is zero.
type bookkeeper interface {
	// partitions is how many partitions of topic_message the reader reads
	// by name (logged with the layout).
	partitions() int
	// fallbacks is how many of its reads fell back for reason (Fallbacks).
	fallbacks(reason string) int64
	// keptBytes is about what the reader keeps in memory (DB.KeptBytes),
	// mapBytes the part of it that is topic maps.
	keptBytes() int64
	mapBytes() int64
}

// count is what r's bookkeeper says, zero for a reader that keeps none.
func count[T int | int64](r reader, of func(bookkeeper) T) T {
	if b, ok := r.(bookkeeper); ok {
		return of(b)
	}
	return 0
}

// readerOf holds the current reader, and the layout it was chosen for,
// behind one atomic pointer (DB.current): nil until LearnLayout first learns
// the layout.
type readerOf struct {
	reader
	layout Layout
}

// reader is the reader of the layout learned last; before LearnLayout, v1's
// (the statements of the plain tables are right on either layout).
func (d *DB) reader() reader {
	if r := d.current.Load(); r != nil {
		return r.reader
	}
	return d.unlearned
}

// newReader is the reader of layout l, the one place that chooses among the
// variants: v1's on plain tables; v2's on partitioned tables, on one
// PostgreSQL server (postgresServer) or on a Citus coordinator
// (citusServer, citusReader), and on Citus without partitions too, where the v1 batches
// would be multi-shard statements (every read is then one topic's, from the
// tables themselves). carried is the state of the v2 readers before it (nil:
// none), which a v2 reader goes on with.
func newReader(ctx context.Context, d *DB, l Layout, carried *v2State) (reader, error) {
	var server v2Server = postgresServer{}
	switch {
	case l.Citus:
		server = citusServer{}
	case !l.Partitioned():
		return &v1Reader{d: d, l: l}, nil
	}
	p, err := newV2Reader(ctx, d, l, server, carried)
	if err != nil {
		return nil, err
	}
	return server.reader(p), nil
}
