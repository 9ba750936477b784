// Package v2 is the query layer's reader of the mirror node's v2 layout
// (Reader: reader.go tells its model), on one PostgreSQL server and on a
// Citus coordinator (Citus, citus.go), db/internal/driver telling what a
// reader is.
package v2

import (
	"sync"
	"sync/atomic"

	"mirrorql/db/internal/driver"
)

// Reader is the reader of the mirror node's v2 layout: topic_message and
// transaction partitioned by range of consensus_timestamp (a partition a
// month), topic_message_lookup kept by the importer, and perhaps Citus.
// It is chosen on Citus too, where the v1 batches would be statements to
// every shard; without partitions its catalog is empty and every read is
// one topic's, from the tables themselves.
//
// Why not the v1 statements: on partitioned tables a statement that does
// not say which partitions it reads pays for all of them at each execution
// (a generic plan locks and opens every partition before run-time pruning;
// a custom plan is planned over every one it cannot prune). So each
// statement here either names the stretch of time it reads as constants,
// a prepared statement whose generic plan holds those partitions alone, or
// carries its bounds as parameters and is planned for them.
//
// The model, from the bottom up:
//
//   - The catalog (catalog.go): each table's partitions and their
//     [lo, hi) bounds, read when the layout is learned. A partition is read
//     through the parent table within its bounds (partition.within), so a
//     partition detached since drops out of the answer as a deleted row
//     does on v1.
//   - The topic map (topicmap.go): which partitions hold which of one
//     topic's sequence numbers and timestamps, from the topic's rows of
//     topic_message_lookup or, where the importer does not keep it, probed
//     from the partitions' indexes. Learned on first use and kept (its
//     mapStore): the importer writes in consensus order, so what a map
//     has seen does not change.
//   - The windows: the map as a run of stretches of consensus time, in
//     order, each read by one statement. A window names a partition where
//     the map vouches for it; where it cannot (before the first segment, a
//     gap in the lookup, a segment spanning partitions, no segment at all)
//     the window is the parent table between bounds, and the read is
//     counted as a fallback (Fallbacks). Past the newest segment lies the
//     tail, partition by partition up to the current one, which every read
//     looks at: the messages written since the map was learned.
//
// For a topic whose messages 1-40 are in January and February, none in
// March, 41-45 in April, read in May:
//
//	partitions  | 2024-01 | 2024-02 | 2024-03 | 2024-04 | 2024-05 (now)
//	map         | 1-25    | 26-40   |         | 41-45   |
//	windows     | part 0  | part 1  |         | part 3  | tail: part 4
//
// March holds none of the topic's messages: no window, no statement.
//
// A read walks the windows in the order of its answer and stops once it has
// its rows (a page plans its walk: planPage). Its statements, by shape:
//
//   - a page of one window: the page statement of v1 (driver's sql.go)
//     within the window's partition, prepared (sliceSQL); on the parent, the
//     same with two more parameters for the bounds, planned for them.
//   - a page over several small windows (a sparse topic): one statement on
//     the parent bounded by the run's first lo and last hi as parameters,
//     and by the constant bounds of a block of partitions that holds the
//     run, so that its generic plan holds that block alone (runSQL).
//   - activity: the first sequence number at or after each boundary, one
//     statement per block of partitions over unnest of the boundaries'
//     windows, pipelined (activityBoundsSQL).
//   - point lookups: by sequence number in the one partition the map names
//     for it (bySequenceOneSQL), a batch a statement per partition (and per
//     topic on Citus), pipelined; by timestamp within the partitions of
//     transaction and topic_message holding that time (byTimestampV2SQL);
//     a key the map cannot place is read as a page of that one key.
//   - the live poll: named partitions from the watermark on when they are
//     few, else planned for the watermark (live.go).
//
// Every statement filters topic_message on its topic (the distribution
// column on Citus). What differs on a Citus coordinator (transaction read
// apart from topic_message, which it is not co-located with; the checks
// below sent apart; the tail and the live poll bounded by time) is the
// reader's server, a variant chosen with the layout (New or NewCitus,
// server.go).
//
// Staleness: a TRUNCATE (a database reset) gives every partition new
// storage. A read by partition also returns the partition's filenode (on
// Citus, a statement pipelined after it: v2Server.checked); one
// other than the catalog's, or a relation that is gone, has the catalog
// read again (relearn) and the read answered anew on it (fresh), its maps
// learned afresh. A page that comes back short without any such check
// checks the catalog itself (checkCatalog). What must outlive a catalog
// (the counts of fallbacks, the live poll's head) is the readers' shared
// v2State, not a reader's.
type Reader struct {
	env          *driver.Env
	l            driver.Layout
	server       v2Server // plain PostgreSQL or a Citus coordinator (server.go)
	state        *v2State // what outlives the catalog
	messages     partitionSet
	transactions partitionSet

	maps mapStore // each topic's windows (topicmap.go)
}

// v2State is what the v2 readers of one database share, one after another
// as its catalog is read anew (relearn, Next): made with the first
// (newReader), handed on to each that follows.
type v2State struct {
	mu        sync.Mutex // one reading of a changed catalog at a time
	newest    *Reader    // the reader of the catalog read last (under mu)
	fallbacks fallbackCounts
	head      atomic.Int64 // the ledger's head the last live poll read (live.go)
}

func (p *Reader) Partitions() int { return len(p.messages.parts) }

func (p *Reader) Fallbacks(reason string) int64 { return p.state.fallbacks.count(reason) }

// KeptBytes: the topic maps, and the descriptions pgx keeps of the
// statements made for partitions (driver's Texts) on every connection,
// up to pgx's statement cache capacity (driver.TextBytes).
func (p *Reader) KeptBytes() int64 {
	return p.maps.bytes() + driver.TextBytes(p.env.Conns)
}

func (p *Reader) MapBytes() int64 { return p.maps.bytes() }
