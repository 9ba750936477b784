package v2

import (
	"context"
	"math"

	"mirrorql/db/internal/driver"
)

// v2Server is what the v2 reader's statements do differently on the two
// servers a v2 database lives on, where they read through its partitions:
//
//   - one PostgreSQL server (postgresServer): a statement runs where the
//     catalog was read;
//   - a Citus coordinator (citusServer, citus.go): a statement on a
//     distributed table runs on the worker that holds its shard, against
//     that worker's catalog, and the coordinator's partitions hold no rows.
//
// The reads Citus answers otherwise altogether (a message by timestamp, the
// batches, the live poll) are Citus's, the v2 reader with those
// methods overridden. db's newReader chooses the server with the reader
// (New or NewCitus), where the layout is learned; the reads call it and never ask which they have.
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
	checked(ctx context.Context, x driver.Exec, ps []driver.Piped, parts []*partition, checks []*int64) error
	// sizesKnown: the catalog's partition sizes are their rows' (not on a
	// coordinator, whose partitions hold none: the shards do).
	sizesKnown() bool
	// tail is the windows past a topic's newest segment: the partitions
	// from parts[from] on, with sequence numbers from below; until is cut
	// to the first partition the tail leaves out.
	tail(parts []partition, from int, below, now int64, until *int64) []window
	// reader is p as this server's reader: p itself, or on Citus p with
	// the reads a coordinator answers otherwise (Citus).
	reader(p *Reader) driver.Reader
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
func (postgresServer) checked(ctx context.Context, x driver.Exec, ps []driver.Piped, _ []*partition, _ []*int64) error {
	return x.Pipeline(ctx, ps)
}

func (postgresServer) sizesKnown() bool { return true }

func (postgresServer) reader(p *Reader) driver.Reader { return p }

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
