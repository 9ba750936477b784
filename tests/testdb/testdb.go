// Package testdb gives every integration test in the repository a PostgreSQL
// database of its own, migrated to the current schema and dropped afterwards.
//
// The schema has one of the mirror node's two layouts
// (docs/reference/v2-layout.md), chosen by MIRRORQL_TEST_LAYOUT: v1 (the default, plain
// tables, db.Migrate) or v2 (the importer's v2 schema, topic_message and
// transaction partitioned by month, fixture.CreateV2), so that one suite checks
// the service on both. `make test` runs the packages that use testdb once per
// layout. The v2 variants a reader meets (Variants: a DEFAULT partition, the
// lookup empty, months missing or detached, Citus) are layouts too.
//
// The server is, in order of preference: MIRRORQL_TEST_DATABASE_URL (an admin
// URL, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, of a
// role that may create databases); a throwaway cluster (package pgcluster) of
// the build in MIRRORQL_POSTGRES_BIN when that is set (`make test PG=18`:
// scripts/postgres.sh gets one per version); the local server at
// 127.0.0.1:5432 as user postgres if it answers within a second; else a
// throwaway cluster of the installed server. A throwaway cluster is started
// once per test binary. Packages that use testdb should
// stop that cluster when their tests end:
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"mirrorql/db"
	"mirrorql/tools/fixture"
	"mirrorql/tools/pgcluster"
)

// EnvURL names the variable that points the tests at a given server.
const EnvURL = "MIRRORQL_TEST_DATABASE_URL"

// LocalURL is the server tried when EnvURL is unset.
const LocalURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Prefix starts the name of every database New creates.
const Prefix = "mirrorql_test_"

// EnvLayout names the variable that chooses the layout New builds: LayoutV1
// (the default) or LayoutV2.
const EnvLayout = "MIRRORQL_TEST_LAYOUT"

// The layouts New and NewLayout build; Variants lists v2's others.
const (
	LayoutV1 = "v1" // db.Migrate: plain tables, as docs/reference/schema.md describes
	LayoutV2 = "v2" // fixture.CreateV2: the importer's v2 schema, monthly partitions, lookup kept
)

// Variant is a v2 layout: the importer's, or one a reader meets beside it.
// A new variant is an entry of Variants; the cross-layout tests run on each.
type Variant struct {
	Name string
	// Options changes the importer's layout (V2Options) into the variant's.
	Options func(*fixture.V2Options)
	// Detached are months whose partitions Settle detaches once the rows
	// are written, as an operator archiving them does.
	Detached []time.Time
	// Fresh: every test database of the variant is built afresh rather than
	// copied from a template built once per process — for a layout a copy
	// cannot carry (say, a distributed one whose shards live on other
	// servers).
	Fresh bool
}

func month(y int, m time.Month) time.Time { return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC) }

// monthsFrom is the months from from up to, not including, to.
func monthsFrom(from, to time.Time) []time.Time {
	var out []time.Time
	for m := from; m.Before(to); m = m.AddDate(0, 1, 0) {
		out = append(out, m)
	}
	return out
}

// Variants are the v2 layouts: the importer's first, then the variants of
// docs/layouts.md. Test data of 2023-11 to 2024-01 (the seed's) has
// partitions in every one, but for the months detached.
func Variants() []Variant {
	return []Variant{
		{Name: LayoutV2, Options: func(*fixture.V2Options) {}},
		{Name: "v2-default", Options: func(o *fixture.V2Options) { o.Default = true }},
		{Name: "v2-no-lookup", Options: func(o *fixture.V2Options) { o.KeepLookup = false }},
		{Name: "v2-missing-months", Options: func(o *fixture.V2Options) {
			o.Missing = append(o.Missing, month(2023, 9), month(2024, 2), month(2024, 3))
		}, Detached: []time.Time{month(2023, 11)}},
		// On a real Citus cluster (citus.go), where each test copies every
		// shard of every month: two shards.
		{Name: "v2-citus", Options: func(o *fixture.V2Options) {
			o.Citus, o.CitusShards = true, 2
		}},
	}
}

// variant is the Variant named name, or false.
func variant(name string) (Variant, bool) {
	for _, v := range Variants() {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// v2From is the first month of a v2 test database's partitions (the
// importer's partitionStartDate, its default 2019-09): 2009-01, so that
// every test's rows have a home, the recorded conformance cases' (of 2009)
// and the fixtures' (from 2011) included.
var v2From = month(2009, 1)

// recentMonths: NewRecent's partitions start this many months ago. Every
// partition is a table and its indexes to copy and drop with each test's
// database: a test whose rows are recent needs a tenth of New's.
const recentMonths = 12

// noRows are the months no test database that is not about partitions
// has rows in: between the recorded conformance cases' (2009-01 to 2009-03)
// and the rest, from 2023-07 on (the seed's 2023-11 to 2024-01, the
// fixtures' and the present).
var noRows = [2]time.Time{month(2009, 4), month(2023, 7)}

// v2Options are the partitions a v2 test database has from from: the
// importer's monthly ones to a year from now, or with rowsOnly the months
// test rows are in, to two months from now. Every partition is two tables
// and their indexes that each test's database copies and drops: some 90
// rather than 450, a fifth of the work, for the tests not about partitions
// (New); those about them (NewLayout) keep every month.
func v2Options(from time.Time, rowsOnly bool) fixture.V2Options {
	o := fixture.DefaultV2Options()
	o.From = from
	if rowsOnly {
		now := time.Now().UTC()
		o.Through = month(now.Year(), now.Month()).AddDate(0, 2, 0)
		o.Missing = monthsFrom(later(from, noRows[0]), noRows[1])
	}
	return o
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Settle detaches the variant's detached months from the v2 database and
// deletes their rows from ref, a v1 database holding the same rows, so that
// both should answer alike: a detached partition's rows are absent.
func (v Variant) Settle(tb testing.TB, v2, ref *bun.DB) {
	tb.Helper()
	ctx := context.Background()
	for _, m := range v.Detached {
		if err := fixture.DetachPartition(ctx, v2, m); err != nil {
			tb.Fatalf("testdb: %s: %v", v.Name, err)
		}
		from, to := m.UnixNano(), m.AddDate(0, 1, 0).UnixNano()
		for _, table := range []string{"topic_message", "transaction"} {
			if _, err := ref.ExecContext(ctx, "delete from ? where consensus_timestamp >= ? and consensus_timestamp < ?",
				bun.Ident(table), from, to); err != nil {
				tb.Fatalf("testdb: %s: %v", v.Name, err)
			}
		}
	}
}

var (
	localURL = LocalURL // tests point it at a port where nothing listens

	serverOnce sync.Once
	serverURL  string
	serverErr  error

	mu      sync.Mutex
	cluster *pgcluster.Cluster
	admin   *sql.DB

	// Each v2 layout, built once per test binary with fixture.CreateV2 in a
	// database of its own, which NewLayout then copies (CREATE DATABASE …
	// TEMPLATE): CreateV2 creates some 450 partitions with their indexes in
	// one transaction, thousands of locks, and a few of those side by side
	// overflowed the server's lock table ("out of shared memory") besides
	// taking seconds each. A copy takes no such locks.
	templates = map[string]*template{}
)

// template is the database a layout's test databases are copied from.
type template struct {
	once sync.Once
	name string
	err  error
}

// ServerURL returns the admin URL of a reachable server, starting a throwaway
// cluster on first use when neither EnvURL nor LocalURL is usable. It fails
// the test when there is no server and none can be started.
func ServerURL(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() { serverURL, serverErr = findServer() })
	if serverErr != nil {
		tb.Fatalf("testdb: no PostgreSQL server: %v", serverErr)
	}
	return serverURL
}

func findServer() (string, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return u, nil
	}
	// A chosen server build is never swapped for whatever listens locally.
	if os.Getenv(pgcluster.EnvBinDir) == "" && answers(localURL, time.Second) {
		return localURL, nil
	}
	mu.Lock()
	defer mu.Unlock()
	c, err := pgcluster.Start(context.Background(), pgcluster.Options{Database: "postgres"})
	if err != nil {
		return "", fmt.Errorf("%s is unset, nothing usable answers at %s, and a throwaway cluster did not start: %w",
			EnvURL, localURL, err)
	}
	cluster = c
	return c.AdminURL(), nil
}

// answers reports whether url accepts a connection and a query within timeout.
func answers(url string, timeout time.Duration) bool {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return false
	}
	cfg.ConnectTimeout = timeout
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "select 1")
	return err == nil
}

// adminDB is a small pool on the server's admin URL, for CREATE/DROP DATABASE.
func adminDB(tb testing.TB) *sql.DB {
	tb.Helper()
	u := ServerURL(tb)
	mu.Lock()
	defer mu.Unlock()
	if admin == nil {
		cfg, err := pgx.ParseConfig(u)
		if err != nil {
			tb.Fatalf("testdb: %s: %v", EnvURL, err)
		}
		admin = stdlib.OpenDB(*cfg)
		// The owner lock's session, the drops and the creates.
		admin.SetMaxOpenConns(2 + dropParallel + 4)
		if err := takeOwnerKey(admin); err != nil {
			_ = admin.Close()
			admin = nil
			tb.Fatalf("testdb: %v", err)
		}
	}
	return admin
}

// New creates an empty database with a unique name, builds the layout of
// Layout() in it, and returns its URL and a handle on it. Both are closed and
// the database dropped when the test ends (on the process's own throwaway
// cluster, left for the cluster's end: createDatabase). On v2 it has partitions for the
// months test rows are in (v2Options); a test about partitions, whose rows
// may fall in any month, asks NewLayout.
func New(tb testing.TB) (url string, b *bun.DB) {
	tb.Helper()
	if v, ok := variant(Layout()); ok {
		return newVariant(tb, v, v2From, true)
	}
	return NewLayout(tb, Layout())
}

// NewRecent is New for a test whose rows are all of the last year (say,
// written at the wall clock): on v2, partitions from a year ago on, rather
// than from 2009. A test not about partitions is cheaper on it.
func NewRecent(tb testing.TB) (url string, b *bun.DB) {
	tb.Helper()
	if v, ok := variant(Layout()); ok {
		return newVariant(tb, v, recentFrom(), true)
	}
	return New(tb)
}

// recentFrom is the first month of NewRecent's partitions.
func recentFrom() time.Time {
	now := time.Now().UTC()
	return month(now.Year(), now.Month()).AddDate(0, -recentMonths, 0)
}

// NewLayout is New with a given layout, LayoutV1, LayoutV2 or a variant's
// name, whatever MIRRORQL_TEST_LAYOUT says: for tests about one layout in
// particular (a v1 plan, the v2 partitions), which must then run in both of
// make test's runs rather than be skipped in one. On v2 every month from
// 2009-01 to a year ahead has its partitions (on Citus, New's months).
func NewLayout(tb testing.TB, layout string) (url string, b *bun.DB) {
	tb.Helper()
	if v, ok := variant(layout); ok {
		return newVariant(tb, v, v2From, false)
	}
	if layout != LayoutV1 {
		tb.Fatalf("testdb: layout %q: want %q, %q or a variant's", layout, LayoutV1, LayoutV2)
	}
	url, b = Empty(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.Migrate(ctx, b); err != nil {
		tb.Fatalf("testdb: %s layout: %v", layout, err)
	}
	return url, b
}

// newVariant is a database of v2 variant v with partitions from from (for
// rowsOnly, v2Options): a copy of its template, or built afresh when v is
// Fresh; on Citus a copy of its template on every node, with the months of
// test rows.
func newVariant(tb testing.TB, v Variant, from time.Time, rowsOnly bool) (url string, b *bun.DB) {
	tb.Helper()
	if o, isCitus := v.citusOptions(); isCitus {
		_, url := createCitus(tb, citusTemplate(tb, v, o), "")
		return url, open(tb, url)
	}
	if !v.Fresh {
		return create(tb, templateDB(tb, v, from, rowsOnly))
	}
	url, b = Empty(tb)
	if err := buildV2(adminDB(tb), b, v, from, rowsOnly); err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return url, b
}

// templateDB is the name of the database holding v's layout with
// partitions from from (for rowsOnly, v2Options), built on first use and
// dropped by Shutdown.
func templateDB(tb testing.TB, v Variant, from time.Time, rowsOnly bool) string {
	tb.Helper()
	admin := adminDB(tb)
	key := v.Name
	if !from.Equal(v2From) {
		key += "_from_" + from.Format("2006_01")
	}
	if rowsOnly {
		key += "_rows"
	}
	mu.Lock()
	tpl := templates[key]
	if tpl == nil {
		tpl = &template{}
		templates[key] = tpl
	}
	mu.Unlock()
	tpl.once.Do(func() {
		name := databaseName("template_" + key)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "create database "+pgx.Identifier{name}.Sanitize()); err != nil {
			tpl.err = fmt.Errorf("create database %s: %w", name, err)
			return
		}
		mu.Lock()
		tpl.name = name // from now on Shutdown drops it, built or not
		mu.Unlock()
		url, err := withDatabase(ServerURL(tb), name)
		if err != nil {
			tpl.err = err
			return
		}
		d, err := db.Open(db.Options{URL: url, ConnectTimeout: 10 * time.Second})
		if err != nil {
			tpl.err = err
			return
		}
		// Closed before any copy: CREATE DATABASE refuses a template that
		// has sessions (it waits up to 5 s for closing ones to go).
		defer d.Close()
		tpl.err = buildV2(admin, d.Bun(), v, from, rowsOnly)
	})
	if tpl.err != nil {
		tb.Fatalf("testdb: %v", tpl.err)
	}
	return tpl.name
}

// buildLock is the advisory lock (with lockClass) held while a v2 layout is
// built, server-wide: fixture.CreateV2 makes some 450 partitions in one
// transaction, a lock each, and a few builds at once (the variants, the
// test processes of several packages) overflowed the server's lock table
// ("out of shared memory"). Owner keys are never 0.
const buildLock = 0

// buildV2 builds variant v's layout in b, one build at a time on the
// server (the lock is taken through admin: advisory locks are the
// database's where they are taken, and every test process's admin pool is
// on the same one).
func buildV2(admin *sql.DB, b *bun.DB, v Variant, from time.Time, rowsOnly bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s layout: %w", v.Name, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "select pg_advisory_lock($1, $2)", lockClass, buildLock); err != nil {
		return fmt.Errorf("%s layout: waiting for the builds before: %w", v.Name, err)
	}
	// Unlocked before conn goes back to the pool.
	defer func() {
		_, _ = conn.ExecContext(context.Background(), "select pg_advisory_unlock($1, $2)", lockClass, buildLock)
	}()
	o := v2Options(from, rowsOnly)
	v.Options(&o)
	if err := fixture.CreateV2(ctx, b, o); err != nil {
		return fmt.Errorf("%s layout: %w", v.Name, err)
	}
	return nil
}

// Layout is the layout New builds: MIRRORQL_TEST_LAYOUT, LayoutV1 when unset,
// LayoutV2 or a variant's name. Any other value panics, so that a typo cannot
// run the v1 suite twice and pass for a v2 run.
func Layout() string {
	l := os.Getenv(EnvLayout)
	if l == "" || l == LayoutV1 {
		return LayoutV1
	}
	if _, ok := variant(l); !ok {
		panic(fmt.Sprintf("testdb: %s=%q: want %q, %q or a variant's name", EnvLayout, l, LayoutV1, LayoutV2))
	}
	return l
}

// IsV2 reports whether layout is v2 or one of its variants.
func IsV2(layout string) bool {
	_, ok := variant(layout)
	return ok
}

// Empty is New without the migrations: a database with nothing in it.
func Empty(tb testing.TB) (url string, b *bun.DB) {
	tb.Helper()
	return create(tb, "")
}

// create creates the test's database as a copy of template ("": of the
// server's default, template1, which is empty) and opens it; both go at
// the test's end.
func create(tb testing.TB, template string) (url string, b *bun.DB) {
	tb.Helper()
	name := createDatabase(tb, template, "")
	url, err := withDatabase(ServerURL(tb), name)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return url, open(tb, url)
}

// open is a pool on the test's database, closed at the test's end (before
// the drop: cleanups are LIFO).
func open(tb testing.TB, url string) *bun.DB {
	tb.Helper()
	d, err := db.Open(db.Options{URL: url, ConnectTimeout: 10 * time.Second, Coalesce: db.DefaultCoalesce})
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	return d.Bun()
}

// Network is a database built as a local Hiero network's mirror node builds
// its own (the importer's db/scripts/init.sh, then its migrations run as the
// owner): the database belongs to an owner role of its own, not to the
// server's admin, and so do its schema and tables; a read-only group role
// has CONNECT, USAGE on the schema and SELECT on every table, present and
// future (default privileges), and a login role in it reads as the REST
// API's mirror_api does; the database's search_path is init.sh's.
type Network struct {
	OwnerURL  string  // as the owner (init.sh's mirror_node), who may write
	ReaderURL string  // as the read-only login (init.sh's mirror_api)
	Owner     string  // the owner's role name
	Reader    string  // the read-only login's role name
	DB        *bun.DB // a pool as the owner, closed at the test's end
}

// LocalNetwork builds a Network in the layout of Layout(). Roles are the
// server's, not the database's, so theirs are unique names; database and
// roles are dropped when the test ends. Passwords are set as a network sets
// them, though a server that trusts local connections ignores them.
func LocalNetwork(tb testing.TB) Network {
	tb.Helper()
	admin := adminDB(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var r [6]byte
	_, _ = rand.Read(r[:])
	suffix := hex.EncodeToString(r[:])
	own := ownedPrefix()
	owner, group, reader := own+"owner_"+suffix, own+"readonly_"+suffix, own+"reader_"+suffix
	id := func(name string) string { return pgx.Identifier{name}.Sanitize() }
	exec := func(on interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, stmts ...string) {
		tb.Helper()
		for _, stmt := range stmts {
			if _, err := on.ExecContext(ctx, stmt); err != nil {
				tb.Fatalf("testdb: local network: %s: %v", stmt, err)
			}
		}
	}
	createRoles := []string{"create role " + id(owner) + " login password 'owner_pass_" + suffix + "'",
		"create role " + id(group) + " nologin",
		"create role " + id(reader) + " login password 'reader_pass_" + suffix + "' in role " + id(group)}
	dropRoles := "drop role if exists " + id(reader) + ", " + id(group) + ", " + id(owner)
	layout := Layout()
	v, v2 := variant(layout)
	var citusDB fixture.V2Options
	isCitus := false
	if v2 {
		citusDB, isCitus = v.citusOptions()
	}
	var name, adminURL string
	if isCitus {
		// The roles are the cluster's, on every node (Citus 12.1
		// propagates CREATE ROLE only from a database that has it), and
		// go after the database: cleanups run last in, first out.
		c := citus(tb)
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.Exec(ctx, dropRoles); err != nil {
				tb.Logf("testdb: the local network's roles are left for the cluster's end: %v", err)
			}
		})
		for _, stmt := range createRoles {
			if err := c.Exec(ctx, stmt); err != nil {
				tb.Fatalf("testdb: local network: %v", err)
			}
		}
		name, adminURL = createCitus(tb, citusTemplate(tb, v, citusDB), "owner "+id(owner))
	} else {
		exec(admin, createRoles...)
		template := ""
		if v2 {
			template = templateDB(tb, v, v2From, true)
		}
		// The roles go after the database (a role that owns one cannot go), or
		// with it in the sweep when the process ends first: their names carry
		// its owner key.
		name = createDatabase(tb, template, "owner "+id(owner), dropRoles)
		var err error
		if adminURL, err = withDatabase(ServerURL(tb), name); err != nil {
			tb.Fatalf("testdb: %v", err)
		}
	}
	inDB, err := sql.Open("pgx", adminURL)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	defer inDB.Close()
	// As the server's admin, what init.sh does as postgres.
	exec(inDB,
		"alter schema public owner to "+id(owner),
		"create extension if not exists btree_gist",
		"alter database "+id(name)+" set search_path = public, public, temporary")
	if v2 {
		// The copied layout is the admin's: hand every table and view to
		// the owner, as if it had migrated. One statement at a time: the
		// partitions are some hundreds, and one transaction would hold a
		// lock on each.
		rows, err := inDB.QueryContext(ctx, `select format('alter %s %I.%I owner to %I',
				case when c.relkind in ('v', 'm') then 'view' else 'table' end, n.nspname, c.relname, $1::text)
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm')`, owner)
		if err != nil {
			tb.Fatalf("testdb: local network: %v", err)
		}
		var stmts []string
		for rows.Next() {
			var stmt string
			if err := rows.Scan(&stmt); err != nil {
				tb.Fatalf("testdb: local network: %v", err)
			}
			stmts = append(stmts, stmt)
		}
		if err := rows.Err(); err != nil {
			tb.Fatalf("testdb: local network: %v", err)
		}
		exec(inDB, stmts...)
	}

	nw := Network{Owner: owner, Reader: reader}
	if nw.OwnerURL, err = withUser(adminURL, owner, "owner_pass_"+suffix); err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	if nw.ReaderURL, err = withUser(adminURL, reader, "reader_pass_"+suffix); err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	d, err := db.Open(db.Options{URL: nw.OwnerURL, ConnectTimeout: 10 * time.Second, Coalesce: db.DefaultCoalesce})
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() }) // before the drop
	nw.DB = d.Bun()
	// As the owner, init.sh's schemas and grants to the read-only role.
	exec(nw.DB,
		"grant usage on schema public to public",
		"revoke create on schema public from public",
		"create schema if not exists temporary",
		"grant usage on schema public, temporary to "+id(group),
		"grant connect on database "+id(name)+" to "+id(group),
		"grant select on all tables in schema public, temporary to "+id(group),
		"alter default privileges in schema public, temporary grant select on tables to "+id(group))
	if layout == LayoutV1 {
		// As the importer migrates: the owner creates the tables, which the
		// default privileges above make readable to the read-only role.
		if err := db.Migrate(ctx, nw.DB); err != nil {
			tb.Fatalf("testdb: local network: %v", err)
		}
	}
	return nw
}

// withUser returns the URL u with its user and password replaced.
func withUser(u, user, password string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("%s must be a postgres:// URL, got %q", EnvURL, u)
	}
	p.User = url.UserPassword(user, password)
	return p.String(), nil
}

// createDatabase creates the test's database as a copy of template ("":
// template1), with options (say, "owner x") appended to CREATE DATABASE,
// and drops it after the test's end, in the background (dropLater), then
// runs after; it returns its name. On the process's own throwaway cluster
// nothing is dropped: the cluster goes when the process ends, its
// databases with it, and a drop (a checkpoint, hundreds of files) would
// only be work the tests beside it wait for.
func createDatabase(tb testing.TB, template, options string, after ...string) string {
	tb.Helper()
	admin := adminDB(tb)
	name := databaseName(tb.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The server's default strategy (WAL_LOG from PostgreSQL 15): FILE_COPY
	// checkpoints twice a copy, and on a busy server was several times
	// slower (BenchmarkCopyV2).
	stmt := "create database " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " template " + pgx.Identifier{template}.Sanitize()
	}
	if options != "" {
		stmt += " " + options
	}
	if _, err := admin.ExecContext(ctx, stmt); err != nil {
		tb.Fatalf("testdb: create database %s: %v", name, err)
	}
	if !ownCluster() {
		tb.Cleanup(func() { dropLater(admin, name, after...) })
	}
	return name
}

// ownCluster: the tests' server is the throwaway cluster this process
// started (findServer), which Shutdown removes.
func ownCluster() bool {
	mu.Lock()
	defer mu.Unlock()
	return cluster != nil
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// databaseName is Prefix, the process's owner key (ownedPrefix), a random
// part and as much of the test's name as fits in PostgreSQL's 63-byte
// identifiers (which helps find a leftover).
func databaseName(test string) string {
	var r [2]byte
	_, _ = rand.Read(r[:])
	name := ownedPrefix() + hex.EncodeToString(r[:]) + "_" + unsafeChars.ReplaceAllString(strings.ToLower(test), "_")
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "_")
}

// withDatabase returns the server URL u with its database replaced by name.
func withDatabase(u, name string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// URL, got %q", EnvURL, u)
	}
	p.Path = "/" + name
	p.RawPath = ""
	return p.String(), nil
}

// Shutdown drops the v2 templates, waits for the background drops (up to
// shutdownWait: what is left, the next process sweeps), releases the owner key,
// closes the admin pool and stops the throwaway cluster, if one was
// started, which takes every database with it. Databases of tests still
// running are lost with it.
func Shutdown() {
	mu.Lock()
	for _, tpl := range templates {
		if admin != nil && tpl.name != "" && cluster == nil {
			dropLater(admin, tpl.name)
		}
	}
	templates = map[string]*template{}
	mu.Unlock()
	waitDrops(shutdownWait)
	mu.Lock()
	defer mu.Unlock()
	shutdownCitus()
	if ownerConn != nil {
		_ = ownerConn.Close() // the session ends, and its lock with it
		ownerConn, ownerKey = nil, 0
	}
	if admin != nil {
		_ = admin.Close()
		admin = nil
	}
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testdb:", err)
		}
		cluster = nil
	}
}

// Main runs the tests of a package, then the package's own cleanups, then
// Shutdown. Call it from TestMain.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	Shutdown()
	os.Exit(code)
}

// KeepLookup turns the v2 layouts' lookup trigger (fixture's stand-in for
// the importer's upsert) on or off, on every partition and, on Citus, every
// shard; on v1, which has none, it does nothing.
func KeepLookup(ctx context.Context, b *bun.DB, keep bool) error {
	stmt := "alter table topic_message disable trigger user"
	if keep {
		stmt = "alter table topic_message enable trigger user"
	}
	_, err := b.ExecContext(ctx, stmt)
	return err
}

// LoadDump runs a pg_dump's data-only INSERTs (a conformance case's
// data.sql) on b, unchanged, as a restore does: with triggers off
// (session_replication_role = replica), so that the dump's own
// topic_message_lookup rows stand as the importer wrote them rather than
// beside those the v2 layouts' trigger would add.
func LoadDump(ctx context.Context, b *bun.DB, dump string) error {
	tx, err := b.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// On Citus the triggers fire on the workers: the setting goes there too
	// (citus.propagate_set_commands; a placeholder elsewhere).
	for _, set := range []string{"set local citus.propagate_set_commands = local", "set local session_replication_role = replica"} {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			return err
		}
	}
	// No arguments: pgx sends the text as one simple query, as psql -f
	// would statement by statement.
	if _, err := tx.ExecContext(ctx, dump); err != nil {
		return err
	}
	return tx.Commit()
}
