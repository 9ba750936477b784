package tests

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"mirrorql/db"
	"mirrorql/tests/testdb"
	"mirrorql/tools/pgcluster"
)

// layoutSnapshot is what `mirrorql migrate` must leave alone in a v2
// database: the kinds of the tables v2 changes, their partitions, every
// index, the columns of those tables (v2's consensus_timestamp is plain
// bigint: the v1 domain nanos_timestamp on a partition key stops pruning),
// the lookup's trigger, and the rows.
type layoutSnapshot struct {
	Relkinds   map[string]string
	Partitions map[string]int
	Indexes    []string
	Columns    []string
	Triggers   []string
	Rows       map[string]int
}

func snapshotLayout(t *testing.T, b *bun.DB) layoutSnapshot {
	t.Helper()
	ctx := context.Background()
	s := layoutSnapshot{Relkinds: map[string]string{}, Partitions: map[string]int{}, Rows: map[string]int{}}
	for _, table := range []string{"topic_message", "transaction", "topic_message_lookup"} {
		var kind string
		var parts, rows int
		if err := b.QueryRowContext(ctx, `select c.relkind::text, (select count(*) from pg_inherits i where i.inhparent = c.oid)
			from pg_class c where c.oid = to_regclass(?)`, table).Scan(&kind, &parts); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if err := b.QueryRowContext(ctx, "select count(*) from ?", bun.Ident(table)).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		s.Relkinds[table], s.Partitions[table], s.Rows[table] = kind, parts, rows
	}
	strs := func(query string) []string {
		var out []string
		if err := b.NewRaw(query).Scan(ctx, &out); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return out
	}
	// mirrorql's own bookkeeping (mirrorql_migrations, created by the first
	// migrate) is not the mirror node's layout.
	s.Indexes = strs(`select tablename || ' ' || indexname || ': ' || indexdef from pg_indexes
		where schemaname = current_schema() and tablename not like 'mirrorql\_%' order by tablename, indexname`)
	s.Columns = strs(`select table_name || '.' || column_name || ' ' || data_type || coalesce(' ' || domain_name, '') ||
			' ' || is_nullable || coalesce(' default ' || column_default, '')
		from information_schema.columns
		where table_schema = current_schema() and table_name in ('topic_message', 'transaction', 'topic_message_lookup')
		order by table_name, ordinal_position`)
	s.Triggers = strs(`select tgrelid::regclass::text || ' ' || tgname from pg_trigger
		where not tgisinternal and tgparentid = 0 order by 1`) // the partitions' clones follow their parent's
	return s
}

// TestMigrateKeepsV2: `mirrorql migrate` (and db.Migrate, which the
// service's start, the demo and seed run) on a database of the v2 layout
// leaves it as it is — the partitioned tables, their partitions, every
// index, the lookup and its trigger, the rows — rather than adding v1's
// unique index or primary keys, or failing on a table that exists in
// another shape. A mirror node's v2 database is migrated so, with the
// service's role or the operator's.
func TestMigrateKeepsV2(t *testing.T) {
	t.Parallel()
	url, b := testdb.NewLayout(t, testdb.LayoutV2)
	ctx := context.Background()
	// A message and its transaction, so that migrate must keep rows too.
	if _, err := b.ExecContext(ctx, `
		insert into topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version, payer_account_id, topic_id)
		values (1700000000000000001, '\x01', '\x02', 1, 3, 98, 7);
		insert into transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		values (1700000000000000001, 27, 22, 98, 1699999999000000000, 7)`); err != nil {
		t.Fatal(err)
	}
	before := snapshotLayout(t, b)
	if before.Relkinds["topic_message"] != "p" || before.Relkinds["transaction"] != "p" || before.Partitions["topic_message"] < 80 ||
		before.Rows["topic_message_lookup"] != 1 {
		t.Fatalf("not the v2 layout to begin with: %+v", before)
	}

	cmd := exec.Command(binary(t), "migrate")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MIRRORQL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "MIRRORQL_DATABASE_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mirrorql migrate: %v\n%s", err, out)
	}
	if diff := cmp.Diff(before, snapshotLayout(t, b)); diff != "" {
		t.Errorf("mirrorql migrate changed the v2 layout (-before +after):\n%s", diff)
	}
	if err := db.Migrate(ctx, b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshotLayout(t, b)); diff != "" {
		t.Errorf("db.Migrate, again, changed the v2 layout (-before +after):\n%s", diff)
	}
}

// TestDemoLayoutV2: `mirrorql demo -layout v2` builds its throwaway
// database in the v2 layout, seeds it, and serves from it; a layout it does
// not know is a usage error (exit 2) before anything starts.
func TestDemoLayoutV2(t *testing.T) {
	t.Parallel()
	if _, err := pgcluster.FindBinaries(); err != nil {
		t.Fatalf("the demo needs PostgreSQL's server binaries: %v", err)
	}
	t.Run("bad layout", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		out, err := exec.CommandContext(ctx, binary(t), "demo", "-layout", "v3").CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "-layout must be v1 or v2") ||
			strings.Contains(string(out), "PostgreSQL") {
			t.Errorf("demo -layout v3: %v (want exit status 2, nothing started)\n%s", err, out)
		}
	})

	d, took := startDemoArgs(t, []string{"-layout", "v2"})
	t.Logf("demo (v2) ready %v after start", took.Round(time.Millisecond))
	status, _, body := get(t, d.base+"/api/v1/topics/0.0.2001/messages?limit=2")
	var msgs struct {
		Messages []struct {
			SequenceNumber int64 `json:"sequence_number"`
		} `json:"messages"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &msgs) != nil || len(msgs.Messages) != 2 || msgs.Messages[0].SequenceNumber != 1 {
		t.Errorf("messages of 0.0.2001 on v2: %d %s", status, body)
	}

	// The demo's own database, at the address it printed.
	m := demoCluster.FindStringSubmatch(d.out.String())
	if m == nil {
		t.Fatalf("the demo did not say its database:\n%s", d.out.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	conn, err := pgx.Connect(ctx, m[3])
	if err != nil {
		t.Fatalf("the demo's database %s: %v", m[3], err)
	}
	defer conn.Close(context.Background())
	var partitioned, lookups int
	if err := conn.QueryRow(ctx, `select (select count(*) from pg_partitioned_table
			where partrelid in ('topic_message'::regclass, 'transaction'::regclass)),
		(select count(*) from topic_message_lookup)`).Scan(&partitioned, &lookups); err != nil {
		t.Fatal(err)
	}
	// 20 topics seeded: the lookup was kept as the seed's COPY wrote them.
	if partitioned != 2 || lookups < 20 {
		t.Errorf("the demo's database: %d of topic_message and transaction partitioned, %d lookup rows; want 2, ≥ 20", partitioned, lookups)
	}
	d.stop(t)
}
