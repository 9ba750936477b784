package testdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"mirrorql/db"
	"mirrorql/tools/pgcluster"
)

func TestMain(m *testing.M) { Main(m) }

// reset forgets the server found so far, so a test can find another.
func reset(t *testing.T) {
	t.Helper()
	Shutdown()
	serverOnce, serverURL, serverErr = sync.Once{}, "", nil
}

func TestNew(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		_, b := New(t)
		if err := b.QueryRowContext(context.Background(), "select current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, Prefix) {
			t.Errorf("database %q lacks prefix %q", name, Prefix)
		}
		for _, table := range db.Tables {
			if _, err := b.ExecContext(context.Background(), "select from "+table+" limit 0"); err != nil {
				t.Errorf("not migrated: %v", err)
			}
		}
	})
	// The subtest's cleanup has dropped its database, in the background;
	// on the process's own cluster it is left for the cluster's end.
	waitDrops(dropWait)
	var n int
	if err := adminDB(t).QueryRowContext(context.Background(), "select count(*) from pg_database where datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := kept(); n != want {
		t.Errorf("database %s: %d after the test, want %d (own cluster: %t)", name, n, want, ownCluster())
	}
}

// TestFallbackToCluster: with no variable and nothing on the local port, a
// throwaway cluster serves, and Shutdown removes it.
func TestFallbackToCluster(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now

	reset(t)
	t.Cleanup(func() { reset(t); localURL = LocalURL })
	localURL = "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable&connect_timeout=1"
	t.Setenv(EnvURL, "")

	t.Run("use", func(t *testing.T) {
		url, b := NewLayout(t, LayoutV1) // the fallback server's, whatever MIRRORQL_TEST_LAYOUT says
		if cluster == nil {
			t.Fatal("no cluster started")
		}
		if want := "127.0.0.1:" + strconv.Itoa(cluster.Port()) + "/"; !strings.Contains(url, want) {
			t.Errorf("url %s is not on the cluster (%s)", url, want)
		}
		if err := b.PingContext(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	dir := cluster.Dir()
	Shutdown()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s left behind (%v)", dir, err)
	}
}

func TestDatabaseName(t *testing.T) {
	long := strings.Repeat("TestSomething/With spaces-and_CAPS", 4)
	a, b := databaseName(long), databaseName(long)
	if a == b {
		t.Errorf("two names alike: %s", a)
	}
	for _, n := range []string{a, b, databaseName("T")} {
		if len(n) > 63 || !strings.HasPrefix(n, Prefix) || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Errorf("bad name %q", n)
		}
	}
}

// TestSweep: the sweep drops the databases and roles of an owner whose
// process has ended (its lock free), and keeps those of a running one (its
// lock held), its own, and those named before the owner keys.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	admin := adminDB(t)
	live, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	const liveKey, goneKey = 0x0badf00d, 0x0dead000
	if _, err := live.ExecContext(ctx, "select pg_advisory_lock($1, $2)", lockClass, liveKey); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = live.ExecContext(ctx, "select pg_advisory_unlock($1, $2)", lockClass, liveKey) }()
	name := func(key uint32, what string) string {
		return fmt.Sprintf("%s%s%08x_sweep_%s", Prefix, ownerMark, key, what)
	}
	gone, running, own, legacy := name(goneKey, "gone"), name(liveKey, "running"), ownedPrefix()+"sweep_own", Prefix+"0123abcd_sweep_legacy"
	goneRole := name(goneKey, "role")
	// The gone owner's lock is held while its objects are made: another test
	// process's sweep on this server (every testdb.New sweeps) would drop
	// them as soon as they exist, between the role and the database owned by
	// it. It is let go just before this sweep, which is then one of those
	// that may drop them.
	goneLock, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer goneLock.Close()
	if _, err := goneLock.ExecContext(ctx, "select pg_advisory_lock($1, $2)", lockClass, goneKey); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"create role " + goneRole,
		"create database " + gone + " owner " + goneRole, "create database " + running, "create database " + own, "create database " + legacy} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{gone, running, own, legacy} {
			if err := dropNow(admin, n); err != nil {
				t.Error(err)
			}
		}
		if _, err := admin.ExecContext(ctx, "drop role if exists "+goneRole); err != nil {
			t.Error(err)
		}
	})
	if _, err := goneLock.ExecContext(ctx, "select pg_advisory_unlock($1, $2)", lockClass, goneKey); err != nil {
		t.Fatal(err)
	}
	sweep(admin, ownerKey)
	var left []string
	if err := admin.QueryRowContext(ctx, "select array(select datname from pg_database where datname = any($1) union all select rolname from pg_roles where rolname = $2 order by 1)",
		[]string{gone, running, own, legacy}, goneRole).Scan(pgtype.NewMap().SQLScanner(&left)); err != nil {
		t.Fatal(err)
	}
	want := []string{legacy, own, running}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("after the sweep: %v, want %v", left, want)
	}
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://u:p@h:5/postgres?sslmode=disable", "x")
	if err != nil || got != "postgres://u:p@h:5/x?sslmode=disable" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := withDatabase("host=h dbname=postgres", "x"); err == nil {
		t.Error("key=value DSN accepted")
	}
}

// TestLocalNetwork: the database, its schema and every table belong to the
// network's owner; its read-only login reads every table and may change
// nothing; the owner may write; and the roles go with the database.
func TestLocalNetwork(t *testing.T) {
	ctx := context.Background()
	var roles []string
	t.Run("use", func(t *testing.T) {
		nw := LocalNetwork(t)
		roles = []string{nw.Owner, nw.Reader}
		var dbOwner, schemaOwner string
		var notOwned []string
		if err := nw.DB.QueryRowContext(ctx, `select pg_get_userbyid(d.datdba), pg_get_userbyid(n.nspowner),
				array(select tablename from pg_tables where schemaname = 'public' and tableowner <> ?)
			from pg_database d, pg_namespace n where d.datname = current_database() and n.nspname = 'public'`,
			nw.Owner).Scan(&dbOwner, &schemaOwner, pgtype.NewMap().SQLScanner(&notOwned)); err != nil {
			t.Fatal(err)
		}
		if dbOwner != nw.Owner || schemaOwner != nw.Owner || len(notOwned) > 0 {
			t.Errorf("database owned by %s, schema public by %s, tables not the owner's %v; want all %s's",
				dbOwner, schemaOwner, notOwned, nw.Owner)
		}
		for _, tc := range []struct {
			name, url, stmt string
			wantCode        string // SQLSTATE; "" for success
		}{
			{"reader reads " + strings.Join(db.Tables, ", "), nw.ReaderURL, "select " + countEach(db.Tables), ""},
			{"reader may not insert", nw.ReaderURL, "insert into topic (id, created_timestamp, timestamp_range) values (1, 1, '[1,)')", "42501"},
			{"reader may not create", nw.ReaderURL, "create table probe (x int)", "42501"},
			{"owner inserts", nw.OwnerURL, "insert into topic (id, created_timestamp, timestamp_range) values (1, 1, '[1,)')", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				conn, err := pgx.Connect(ctx, tc.url)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				_, err = conn.Exec(ctx, tc.stmt)
				var pgErr *pgconn.PgError
				switch {
				case tc.wantCode == "" && err != nil:
					t.Errorf("%s: %v", tc.stmt, err)
				case tc.wantCode != "" && (!errors.As(err, &pgErr) || pgErr.Code != tc.wantCode):
					t.Errorf("%s: %v, want SQLSTATE %s", tc.stmt, err, tc.wantCode)
				}
			})
		}
	})
	waitDrops(dropWait)
	var n int
	if err := adminDB(t).QueryRowContext(ctx, "select count(*) from pg_roles where rolname = any($1)", roles).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := len(roles) * kept(); n != want {
		t.Errorf("%d of the roles %v after the test, want %d (own cluster: %t)", n, roles, want, ownCluster())
	}
}

// kept is how many of each object a test made is left after it: none,
// but on the process's own cluster, whose end takes them (createDatabase).
func kept() int {
	if ownCluster() {
		return 1
	}
	return 0
}

// countEach is a select list counting the rows of each table.
func countEach(tables []string) string {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = "(select count(*) from " + t + ")"
	}
	return strings.Join(parts, ", ")
}

// TestNewLayout: each layout is what its name says, whatever
// MIRRORQL_TEST_LAYOUT is: v1's topic_message a plain table, v2's
// partitioned by month with the lookup's gist index.
func TestNewLayout(t *testing.T) {
	for layout, want := range map[string]string{LayoutV1: "r 0 0", LayoutV2: "p 1 1"} {
		t.Run(layout, func(t *testing.T) {
			_, b := NewLayout(t, layout)
			var got string
			if err := b.QueryRowContext(context.Background(), `select c.relkind::text
				|| ' ' || (select count(*) from pg_inherits where inhparent = c.oid and inhrelid::regclass::text = 'topic_message_p2019_09')
				|| ' ' || (select count(*) from pg_indexes where indexname = 'topic_message_lookup__topic_sequence_number_range')
				from pg_class c where c.oid = 'topic_message'::regclass`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("topic_message relkind, first partition, gist index: %q, want %q", got, want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	for env, want := range map[string]string{"": LayoutV1, "v1": LayoutV1, "v2": LayoutV2, "v2-default": "v2-default"} {
		t.Setenv(EnvLayout, env)
		if got := Layout(); got != want {
			t.Errorf("%s=%q: Layout() = %q, want %q", EnvLayout, env, got, want)
		}
	}
	// A typo must not run the v1 suite under the v2 run's name.
	t.Setenv(EnvLayout, "V2")
	defer func() {
		if recover() == nil {
			t.Errorf("%s=V2: no panic", EnvLayout)
		}
	}()
	Layout()
}

// TestServerVersion: the tests run on the server they were asked for. With
// MIRRORQL_POSTGRES_BIN set (make test-on PG=18), that build's major version
// answers, not whatever listens on 127.0.0.1:5432.
func TestServerVersion(t *testing.T) {
	_, b := Empty(t)
	var version string
	if err := b.QueryRowContext(context.Background(), "show server_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s", version)
	dir := os.Getenv(pgcluster.EnvBinDir)
	if dir == "" || os.Getenv(EnvURL) != "" {
		return
	}
	out, err := exec.Command(filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// "postgres (PostgreSQL) 18.4"
	fields := strings.Fields(string(out))
	want, _, _ := strings.Cut(fields[len(fields)-1], ".")
	if got, _, _ := strings.Cut(version, "."); got != want {
		t.Errorf("server %s answers, want PostgreSQL %s from %s", version, want, dir)
	}
}

// partitions is how many months variant name's test databases have
// partitions for (v2Options' from and rowsOnly).
func partitions(name string, from time.Time, rowsOnly bool) int {
	o := v2Options(from, rowsOnly)
	v, _ := variant(name)
	v.Options(&o)
	n := 0
	for m := o.From; !m.After(o.Through); m = m.AddDate(0, 1, 0) {
		n++
	}
	return n - len(o.Missing)
}

// TestVariants: each v2 variant is what its name says, on top of the
// importer's layout.
func TestVariants(t *testing.T) {
	const probe = `select (select count(*) from pg_inherits where inhparent = 'topic_message'::regclass)
			|| ' default ' || (select count(*) from pg_partitioned_table where partrelid = 'topic_message'::regclass and partdefid <> 0)
			|| ' 2024_02 ' || (to_regclass('topic_message_p2024_02') is not null)
			|| ' trigger ' || (select count(*) from pg_trigger where tgrelid = 'topic_message'::regclass and not tgisinternal)
			|| ' citus ' || exists (select 1 from pg_extension where extname = 'citus')`
	n := partitions(LayoutV2, v2From, false)
	want := map[string]string{
		LayoutV2:            fmt.Sprintf("%d default 0 2024_02 true trigger 1 citus false", n),
		"v2-default":        fmt.Sprintf("%d default 1 2024_02 true trigger 1 citus false", n+1),
		"v2-no-lookup":      fmt.Sprintf("%d default 0 2024_02 true trigger 0 citus false", n),
		"v2-missing-months": fmt.Sprintf("%d default 0 2024_02 false trigger 1 citus false", n-3),
		// On Citus, NewLayout's months are New's.
		"v2-citus": fmt.Sprintf("%d default 0 2024_02 true trigger 1 citus true", partitions("v2-citus", v2From, true)),
		// New's: the months test rows are in.
		LayoutV2 + " rows": fmt.Sprintf("%d default 0 2024_02 true trigger 1 citus false", partitions(LayoutV2, v2From, true)),
	}
	want[LayoutV2+" fresh"] = fmt.Sprintf("%d default 0 2024_02 false trigger 1 citus false", partitions(LayoutV2, recentFrom(), true))
	check := func(t *testing.T, b *bun.DB, name string) {
		t.Helper()
		var got string
		if err := b.QueryRowContext(context.Background(), probe).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want[name] {
			t.Errorf("partitions, default, 2024-02, triggers, citus: %q, want %q", got, want[name])
		}
	}
	for _, v := range RunVariants() {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			_, b := NewLayout(t, v.Name)
			check(t, b, v.Name)
		})
	}
	// A variant that opts out of the template is built afresh, alike (with
	// a year of partitions: a build is the costly part).
	t.Run("fresh", func(t *testing.T) {
		t.Parallel()
		v, _ := variant(LayoutV2)
		v.Fresh = true
		_, b := newVariant(t, v, recentFrom(), true)
		check(t, b, LayoutV2+" fresh")
	})
	t.Run("rows", func(t *testing.T) {
		t.Parallel()
		v, _ := variant(LayoutV2)
		_, b := newVariant(t, v, v2From, true)
		check(t, b, LayoutV2+" rows")
	})
}

// BenchmarkCopyV2 measures a test database copied from the v2 template
// with each of CREATE DATABASE's strategies (PostgreSQL 15+): WAL_LOG, the
// default, writes every block to the WAL; FILE_COPY copies the files and
// checkpoints twice. Each copy is dropped in the background, as a test's is.
func BenchmarkCopyV2(b *testing.B) {
	v, _ := variant(LayoutV2)
	tpl := templateDB(b, v, v2From, false)
	admin := adminDB(b)
	for _, strategy := range []string{"wal_log", "file_copy"} {
		b.Run(strategy, func(b *testing.B) {
			for range b.N {
				name := databaseName(b.Name())
				if _, err := admin.ExecContext(context.Background(), "create database "+name+" template "+tpl+" strategy "+strategy); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := dropNow(admin, name); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// TestNewRecent: on v2, New's partitions start in 2009 (the conformance
// cases' rows), NewRecent's a year ago; on v1 both are plain tables; on
// Citus both have the variant's own months (2009's first and the recent).
func TestNewRecent(t *testing.T) {
	probe := `select c.relkind::text || ' ' || (to_regclass('topic_message_p2009_01') is not null)
		|| ' ' || (to_regclass(?) is not null) || ' ' || (to_regclass(?) is not null)
		from pg_class c where c.oid = 'topic_message'::regclass`
	from := recentFrom()
	first, before := from.Format("topic_message_p2006_01"), from.AddDate(0, -1, 0).Format("topic_message_p2006_01")
	want := map[bool][2]string{false: {"r false false false", "r false false false"}, true: {"p true true true", "p false true false"}}[IsV2(Layout())]
	if v, ok := variant(Layout()); ok {
		if _, isCitus := v.citusOptions(); isCitus {
			want[1] = want[0]
		}
	}
	for i, newDB := range []func(testing.TB) (string, *bun.DB){New, NewRecent} {
		_, b := newDB(t)
		var got string
		if err := b.QueryRowContext(context.Background(), probe, first, before).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("%s: relkind, 2009-01, %s, the month before: %q, want %q", []string{"New", "NewRecent"}[i], first, got, want[i])
		}
	}
}
