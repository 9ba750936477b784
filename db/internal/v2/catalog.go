package v2

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
)

// The catalog of the v2 layout (reader.go): each partitioned table's
// partitions with their consensus_timestamp bounds, read when the layout is
// learned and again when the database changed under it, and the checks a
// read makes that it is still current.

// partition is one partition of a time-partitioned table.
type partition struct {
	name     string // as SQL: schema and name, each quoted by pgx.Identifier when the catalog is read
	rel      string // the bare relation name (topic_message_lookup.partition holds it)
	lo, hi   int64  // consensus_timestamp bounds [lo, hi); MINVALUE and MAXVALUE as the int64 extremes
	filenode int64  // pg_relation_filenode when the catalog was read: TRUNCATE gives a new one
	empty    bool   // had no storage at all when the catalog was read (never written)
	check    string // the first column of a statement that reads through it (v2Server.checkColumn)
}

// partitionSet is one table's partitions, ordered by their bounds.
type partitionSet struct {
	parts []partition
}

// find is the index of the partition holding ts, or -1.
func (s *partitionSet) find(ts int64) int {
	i := sort.Search(len(s.parts), func(i int) bool { return s.parts[i].hi > ts || s.parts[i].hi == math.MaxInt64 })
	if i < len(s.parts) && s.parts[i].lo <= ts {
		return i
	}
	return -1
}

// at is the partition that holds ts, or the parent table (wholeTable) when
// none does or the table is not partitioned.
func (s *partitionSet) at(ts int64) *partition {
	if i := s.find(ts); i >= 0 {
		return &s.parts[i]
	}
	return wholeTable()
}

// wholeTable stands for the parent table itself: no name, bounds that hold
// every time, so that within adds no condition, and no storage to check
// (-1, as checkPartitionSQL says of a table that is no partition). The zero
// partition's bounds, [0, 0), hold none: a statement within them finds
// nothing.
func wholeTable() *partition {
	return &partition{lo: math.MinInt64, hi: math.MaxInt64, filenode: -1, check: "-1::bigint"}
}

// partitionsSQL lists a table's partitions with their bounds and storage.
const partitionsSQL = "SELECT n.nspname::text, c.relname::text, coalesce(pg_get_expr(c.relpartbound, c.oid), ''), " +
	"coalesce(pg_relation_filenode(c.oid), 0)::bigint, pg_relation_size(c.oid) = 0 " +
	"FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE i.inhparent = to_regclass(?)"

// boundRE reads a range partition's bound, "FOR VALUES FROM ('…') TO ('…')".
var boundRE = regexp.MustCompile(`^FOR VALUES FROM \((.+)\) TO \((.+)\)$`)

// parseBound is one side of a range bound: MINVALUE, MAXVALUE or a number.
func parseBound(s string) (int64, error) {
	switch s = strings.Trim(strings.TrimSpace(s), "'"); strings.ToUpper(s) {
	case "MINVALUE":
		return math.MinInt64, nil
	case "MAXVALUE":
		return math.MaxInt64, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// parsePartition reads one row of partitionsSQL; ok is false for a partition
// whose bound is not a single bigint range (a DEFAULT partition, a list or
// multi-column bound): the catalog cannot route reads to such a layout.
func parsePartition(name, rel, bound string, filenode int64) (p partition, ok bool) {
	m := boundRE.FindStringSubmatch(bound)
	if m == nil || strings.Contains(m[1], ",") || strings.Contains(m[2], ",") {
		return partition{}, false
	}
	lo, err1 := parseBound(m[1])
	hi, err2 := parseBound(m[2])
	if err1 != nil || err2 != nil || lo >= hi {
		return partition{}, false
	}
	return partition{name: name, rel: rel, lo: lo, hi: hi, filenode: filenode}, true
}

// loadPartitionSet reads the partitions of table. A partitioned table whose
// partitions the catalog cannot route to (a DEFAULT partition, overlapping
// or sub-partitioned ones) comes back with no partitions: every read then
// goes to the parent, bounded, as on a table of unknown layout.
func loadPartitionSet(ctx context.Context, x driver.Exec, server v2Server, table string, partitioned bool) (partitionSet, error) {
	var s partitionSet
	if !partitioned {
		return s, nil
	}
	rows, err := x.QueryRows(ctx, partitionsSQL, table)
	if err != nil {
		return s, fmt.Errorf("partitions of %s: %w", table, err)
	}
	defer rows.Close()
	routable := true
	for rows.Next() {
		var schema, rel, bound string
		var filenode int64
		var empty bool
		if err := rows.Scan(&schema, &rel, &bound, &filenode, &empty); err != nil {
			return s, fmt.Errorf("partitions of %s: %w", table, err)
		}
		// The name goes into SQL text: quoted here, once, as an identifier.
		p, ok := parsePartition(pgx.Identifier{schema, rel}.Sanitize(), rel, bound, filenode)
		p.empty = empty && server.sizesKnown()
		p.check = server.checkColumn(&p)
		routable = routable && ok
		s.parts = append(s.parts, p)
	}
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("partitions of %s: %w", table, err)
	}
	sort.Slice(s.parts, func(i, j int) bool { return s.parts[i].lo < s.parts[j].lo })
	for i := 1; i < len(s.parts) && routable; i++ {
		routable = s.parts[i-1].hi <= s.parts[i].lo
	}
	if !routable {
		s.parts = nil
	}
	return s, nil
}

// New is the reader of a v2 database of layout l on one PostgreSQL server
// (db's newReader), to follow prev: it goes on with prev's state when prev
// is a v2 reader.
func New(ctx context.Context, env *driver.Env, l driver.Layout, prev driver.Reader) (driver.Reader, error) {
	return newReader(ctx, env, l, postgresServer{}, prev)
}

// NewCitus is New on a Citus coordinator: the v2 reader there (Citus).
func NewCitus(ctx context.Context, env *driver.Env, l driver.Layout, prev driver.Reader) (driver.Reader, error) {
	return newReader(ctx, env, l, citusServer{}, prev)
}

// newReader is the reader of a v2 database's catalog on server, the
// newest of the readers that share state: prev's, when prev is a v2 reader
// (else it is the first, which makes it).
func newReader(ctx context.Context, env *driver.Env, l driver.Layout, server v2Server, prev driver.Reader) (driver.Reader, error) {
	state := &v2State{}
	switch r := prev.(type) {
	case *Reader:
		state = r.state
	case Citus:
		state = r.state
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	p, err := state.read(ctx, env, l, server)
	if err != nil {
		return nil, err
	}
	state.newest = p
	return server.reader(p), nil
}

// read reads the catalog into a reader that shares s. Under s.mu. Its
// statements go through bun rather than run, so their errors are made app's
// here.
func (s *v2State) read(ctx context.Context, env *driver.Env, l driver.Layout, server v2Server) (*Reader, error) {
	p := &Reader{env: env, l: l, server: server, state: s}
	var err error
	if p.messages, err = loadPartitionSet(ctx, env, server, "topic_message", l.MessagesPartitioned); err != nil {
		return nil, env.Failed(err)
	}
	if p.transactions, err = loadPartitionSet(ctx, env, server, "transaction", l.TransactionsPartitioned); err != nil {
		return nil, env.Failed(err)
	}
	return p, nil
}

// Next is p while the layout and the catalog are unchanged (the same
// partitions: names, bounds, storage and whether they were ever written),
// else the reader of the new catalog, or of the new layout.
func (p *Reader) Next(ctx context.Context, l driver.Layout) (driver.Reader, error) {
	if l != p.l {
		return p.env.Choose(ctx, l, p)
	}
	s := p.state
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.read(ctx, p.env, l, p.server)
	if err != nil {
		return nil, err
	}
	if slices.Equal(p.messages.parts, q.messages.parts) && slices.Equal(p.transactions.parts, q.transactions.parts) {
		return p.server.reader(p), nil
	}
	s.newest = q
	return q.server.reader(q), nil
}

// errStale: the catalog no longer matches the database; read it again and
// answer anew. It is app's already (failed): a read that still finds the
// catalog stale after reading it again fails as a statement does.
var errStale error = &app.Unavailable{Cause: errors.New("partition catalog is stale")}

// staleTries is how many times fresh answers a read anew.
const staleTries = 2

// stale: err says that the catalog no longer matches the database.
func stale(err error) bool { return err == errStale || isUndefinedTable(err) }

// fresh runs read on the catalog, and again on a catalog read anew when
// the database changed under it (a partition truncated, detached or
// dropped): staleTries times at most.
func fresh[T any](ctx context.Context, p *Reader, read func(*Reader) (T, error)) (T, error) {
	for tries := 0; ; tries++ {
		v, err := read(p)
		if tries == staleTries || !stale(err) {
			return v, err
		}
		if p, err = p.relearn(ctx); err != nil {
			return v, err
		}
	}
}

// relearn reads the catalog again (a partition was added, detached or
// truncated), counted as a stale fallback: the topic maps start afresh with
// it. Concurrent calls share one reading.
func (p *Reader) relearn(ctx context.Context) (*Reader, error) {
	s := p.state
	s.fallbacks.add(whyStale, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := p.env.Current.Load(); cur != nil && cur.Reader != p.server.reader(p) {
		if cur.Reader == p.server.reader(s.newest) {
			return s.newest, nil // someone else read it meanwhile
		}
		// LearnLayout found the v1 layout meanwhile: finish on its empty catalog
		return &Reader{env: p.env, l: cur.Layout, server: p.server, state: s}, nil
	}
	next, err := s.read(ctx, p.env, p.l, p.server)
	if err != nil {
		return nil, err
	}
	s.newest = next
	p.env.Current.Store(&driver.Current{Reader: next.server.reader(next), Layout: p.l})
	return next, nil
}

// isUndefinedTable: the statement named a relation that no longer exists
// (a partition dropped since the catalog was read).
func isUndefinedTable(err error) bool {
	code, ok := driver.SQLState(err)
	return ok && code == "42P01"
}

// checkSQL is what a page read in a partition also returns: its filenode.
// One other than the catalog's means the table was truncated (a reset)
// since the catalog and the topic maps were learned. The statements read the
// partition through the parent table (within), so a partition detached
// since is not read at all and needs no check of its own: the filenode comes
// from the server's cache of the catalog, without a scan of pg_class.
func checkSQL(p *partition) string {
	return "(SELECT pg_relation_filenode(" + quoteLiteral(p.name) + "::regclass)::bigint)"
}

// within is the partition's bounds as conditions on a column: a statement
// on the parent table with them is planned for that partition alone
// (pruned when planned, generic plans too: the bounds are constants), and
// its plan holds the parent and that partition only. Read so rather than by
// the partition's name, a detached partition drops out of the answer as it
// does from v1's, and a statement that found its row needs no check.
func (p *partition) within(col string) string {
	s := ""
	if p.lo != math.MinInt64 {
		s += " AND " + col + " >= " + strconv.FormatInt(p.lo, 10)
	}
	if p.hi != math.MaxInt64 {
		s += " AND " + col + " < " + strconv.FormatInt(p.hi, 10)
	}
	return s
}

// partitionCheck is the check of the partition whose oid follows it.
const partitionCheck = "SELECT CASE WHEN c.relispartition THEN pg_relation_filenode(c.oid)::bigint ELSE -1 END " +
	"FROM pg_class AS c WHERE c.oid = "

// checkPartitionSQL is checkSQL for a partition named by a parameter: a read
// that found nothing in the partitions it named checks the catalog with it.
const checkPartitionSQL = "SELECT coalesce((" + partitionCheck + "to_regclass($1)), -1)"
