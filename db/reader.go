package db

import (
	"context"

	"mirrorql/app"
	"mirrorql/model"
)

// reader is what a question asks of the layout: the reads that differ
// between the mirror node's v1 layout (v1Reader, v1_reader.go: plain tables,
// a statement per question) and its v2 layout (v2Reader, v2_reader.go:
// partitioned tables, read through each topic's map). LearnLayout chooses
// one when it learns the layout, and again when the layout changes; the
// exported reads call d.reader() and never ask which layout they are in.
// Errors come back unwrapped but where a method says otherwise: the
// exported read names the question.
type reader interface {
	// layout is the layout the reader was chosen for.
	layout() Layout

	messagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error)
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

	// keptBytes is about what the reader keeps in memory (DB.KeptBytes),
	// mapBytes the part of it that is topic maps.
	keptBytes() int64
	mapBytes() int64
}

// readerOf holds the current reader behind one atomic pointer
// (DB.current): nil until LearnLayout first learns the layout.
type readerOf struct{ reader }

// reader is the reader of the layout learned last; before LearnLayout, v1's
// (the statements of the plain tables are right on either layout).
func (d *DB) reader() reader {
	if r := d.current.Load(); r != nil {
		return r.reader
	}
	return d.unlearned
}

// readerFor is the reader of layout l, its catalog read from d: v2's on
// partitioned tables, and on Citus, where the v1 batches would be
// multi-shard statements (without partitions every read is then one
// topic's, from the tables themselves).
func (d *DB) readerFor(ctx context.Context, l Layout) (reader, error) {
	if !l.Partitioned() && !l.Citus {
		return &v1Reader{d: d, l: l}, nil
	}
	return d.loadPartitions(ctx, l)
}

// sameReader: b reads the same layout as a, from the same catalog.
func sameReader(a, b reader) bool {
	switch a := a.(type) {
	case *v1Reader:
		b, ok := b.(*v1Reader)
		return ok && a.l == b.l
	case *v2Reader:
		b, ok := b.(*v2Reader)
		return ok && a.sameCatalog(b)
	}
	return false
}
