// Package driver is what package db hands a layout's reader, and what the
// layouts' readers share, as database/sql separates a driver from its
// users: db keeps the questions the rest of the service asks and the
// plumbing (the pool, the one execution path, pipelines, coalescing, app's
// errors); each layout is a package of its own (db/internal/v1,
// db/internal/v2) that reads through the small executor db hands it (Exec,
// in an Env) and answers Reader's methods.
//
// Here too is the SQL both layouts share (sql.go: what their statements
// are made of, the message columns, a page's conditions and ranges, the
// live poll's pieces, and how model values become SQL text), and how rows
// become model values (scan.go).
package driver

import (
	"context"
	"database/sql"
	"sync/atomic"

	"mirrorql/app"
	"mirrorql/model"
)

// Reader is what a question asks of the layout: the reads that differ
// between the mirror node's v1 layout (v1.Reader: plain tables, a statement
// per question) and its v2 layout (v2.Reader: partitioned tables, read
// through each topic's map). db's newReader chooses one when LearnLayout
// first learns the layout, and each reader then says which follows it when
// the layout is learned again (Next); db's exported reads call d.reader()
// and never ask which layout they are in.
// Errors come back unwrapped but where a method says otherwise: the
// exported read names the question. What a reader keeps account of beside
// its answers is Bookkeeper's, which only the v2 reader implements.
type Reader interface {
	// Next is the reader of layout l, just learned (LearnLayout), to follow
	// this one: this one itself when neither l nor what it read of the
	// database (v2: the catalog) changed, so that what it learned since (v2:
	// the topic maps) is kept; else Env.Choose's (db's newReader), handed
	// this one, whose state a reader of the same kind goes on with (v2: its
	// v2State).
	Next(ctx context.Context, l Layout) (Reader, error)

	// MessagesOfTopics is each topic's page of f (MessagesOfTopic asks
	// for one topic); a topic without messages is absent.
	MessagesOfTopics(ctx context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error)
	LatestMessages(ctx context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error)
	// Firsts is, for each boundary, the first sequence number at or after
	// it (the last one plus one past the topic's last message): Activity's
	// counts are their differences.
	Firsts(ctx context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error)
	// Chunks is the chunked messages in the windows of sequence numbers
	// [los[i], his[i]] of topics[i], each row with the (1-based) window it
	// was asked for in of.
	Chunks(ctx context.Context, topics, los, his []int64) (rows []model.TopicMessage, of []int64, err error)
	// LivePoll sends LivePoll's statement (or statements), its rows read
	// by r.
	LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int, r *LivePollRows) error

	// The point lookups (app.ErrNotFound for no message, or several) and
	// their batches, which db's coalescers share (point_lookups.go). The
	// batches wrap their errors themselves.
	MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error)
	MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error)
	MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error)
	MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error)
}

// Bookkeeper is what a reader may keep account of beside its answers: the
// v2 reader's partitions, fallbacks and memory. A reader without it (v1's)
// keeps none of them: each count is zero.
type Bookkeeper interface {
	// Partitions is how many partitions of topic_message the reader reads
	// by name (logged with the layout).
	Partitions() int
	// Fallbacks is how many of its reads fell back for reason (db.Fallbacks).
	Fallbacks(reason string) int64
	// KeptBytes is about what the reader keeps in memory (DB.KeptBytes),
	// MapBytes the part of it that is topic maps.
	KeptBytes() int64
	MapBytes() int64
}

// Current is the reader db reads with and the layout it was chosen for,
// behind one atomic pointer (db's DB.current, Env.Current): nil until
// LearnLayout first learns the layout.
type Current struct {
	Reader
	Layout Layout
}

// Env is what db hands a layout's reader, once per pool: the executor, and
// the little a reader needs of the pool beside it.
type Env struct {
	Exec
	// Conns is the pool's most open connections: each may hold a prepared
	// statement of every text made (TextBytes).
	Conns int
	// Current is db's current reader. The v2 reader replaces itself there
	// when it reads the catalog anew (the database changed under a read).
	Current *atomic.Pointer[Current]
	// Choose is db's newReader, the one place that chooses among the
	// layouts' readers: the reader of layout l to follow prev.
	Choose func(ctx context.Context, l Layout, prev Reader) (Reader, error)
}

// Exec is db's one execution path, as a reader sends its statements. Each
// error but QueryRows's is app's already (db's failed).
type Exec interface {
	// Query runs one of the query layer's fixed statements, its values bound
	// as parameters ($1, …) rather than written into the text, prepared
	// once per connection (unless the pool prepares none), and hands the
	// rows to read (which must not keep them).
	Query(ctx context.Context, read func(RowSource) error, sql string, args ...any) error
	// QueryPlanned is Query for a statement whose best plan depends on its
	// values: it is never prepared, so the server plans it for them every
	// time rather than settling on a generic plan.
	QueryPlanned(ctx context.Context, read func(RowSource) error, sql string, args ...any) error
	// Pipeline runs fixed statements as Query does, but sends them all at
	// once and reads their results in order: one round trip for the lot.
	Pipeline(ctx context.Context, ps []Piped) error
	// QueryRows runs a statement through bun (its placeholders ?, its
	// query hooks told: Health, the statement log), for the catalog's reads;
	// its error, and its rows', are not yet app's: Failed makes them so.
	QueryRows(ctx context.Context, sql string, args ...any) (*sql.Rows, error)
	// Failed is err in app's vocabulary (db's failed).
	Failed(err error) error
}

// Piped is one statement of a pipeline: its text, its values and what
// reads its rows.
type Piped struct {
	SQL  string
	Args []any
	Read func(RowSource) error
}

// RowSource is what scanning needs of a result (pgx's rows; tests hand in
// their own).
type RowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}
