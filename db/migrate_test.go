package db_test

import (
	"context"
	"encoding/json"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"mirrorql/db"
	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// wantColumns is docs/reference/schema.md §2: table | column | type | null | default, in
// physical column order.
const wantColumns = `
custom_fee | fixed_fees | jsonb |  |
custom_fee | fractional_fees | jsonb |  |
custom_fee | royalty_fees | jsonb |  |
custom_fee | timestamp_range | int8range | not null |
custom_fee | entity_id | bigint | not null |
entity | auto_renew_account_id | bigint |  |
entity | auto_renew_period | bigint |  |
entity | created_timestamp | bigint |  |
entity | deleted | boolean |  |
entity | expiration_timestamp | bigint |  |
entity | id | bigint | not null |
entity | key | bytea |  |
entity | memo | text | not null | ''::text
entity | num | bigint | not null |
entity | public_key | character varying |  |
entity | proxy_account_id | bigint |  |
entity | realm | bigint | not null |
entity | shard | bigint | not null |
entity | receiver_sig_required | boolean |  |
entity | max_automatic_token_associations | integer |  |
entity | timestamp_range | int8range | not null |
entity | type | entity_type | not null | 'UNKNOWN'::entity_type
entity | alias | bytea |  |
entity | ethereum_nonce | bigint |  | 0
entity | evm_address | bytea |  |
entity | decline_reward | boolean | not null | false
entity | staked_account_id | bigint |  |
entity | staked_node_id | bigint |  | '-1'::integer
entity | stake_period_start | bigint |  | '-1'::integer
entity | obtainer_id | bigint |  |
entity | permanent_removal | boolean |  |
entity | balance | bigint |  |
entity | balance_timestamp | bigint |  |
entity | delegation_address | bytea |  |
schedule | consensus_timestamp | bigint | not null |
schedule | creator_account_id | bigint | not null |
schedule | executed_timestamp | bigint |  |
schedule | payer_account_id | bigint | not null |
schedule | schedule_id | bigint | not null |
schedule | transaction_body | bytea | not null |
schedule | expiration_time | bigint |  |
schedule | wait_for_expiry | boolean | not null | false
topic | admin_key | bytea |  |
topic | created_timestamp | bigint |  |
topic | id | bigint | not null |
topic | fee_exempt_key_list | bytea |  |
topic | fee_schedule_key | bytea |  |
topic | submit_key | bytea |  |
topic | timestamp_range | int8range | not null |
topic_message | consensus_timestamp | nanos_timestamp | not null |
topic_message | message | bytea | not null |
topic_message | running_hash | bytea | not null |
topic_message | sequence_number | bigint | not null |
topic_message | running_hash_version | smallint |  |
topic_message | chunk_num | integer |  |
topic_message | chunk_total | integer |  |
topic_message | payer_account_id | entity_id |  |
topic_message | valid_start_timestamp | nanos_timestamp |  |
topic_message | topic_id | bigint | not null |
topic_message | initial_transaction_id | bytea |  |
topic_message_lookup | partition | text | not null |
topic_message_lookup | sequence_number_range | int8range | not null |
topic_message_lookup | timestamp_range | int8range | not null |
topic_message_lookup | topic_id | bigint | not null |
transaction | consensus_timestamp | bigint | not null |
transaction | type | smallint | not null |
transaction | result | smallint | not null |
transaction | payer_account_id | entity_id | not null |
transaction | valid_start_ns | bigint | not null |
transaction | valid_duration_seconds | bigint |  |
transaction | node_account_id | entity_id |  |
transaction | entity_id | entity_id |  |
transaction | initial_balance | bigint |  | 0
transaction | max_fee | hbar_tinybars |  |
transaction | charged_tx_fee | bigint |  |
transaction | memo | bytea |  |
transaction | transaction_hash | bytea |  |
transaction | transaction_bytes | bytea |  |
transaction | scheduled | boolean | not null | false
transaction | nonce | integer | not null | 0
transaction | parent_consensus_timestamp | bigint |  |
transaction | errata | errata_type |  |
transaction | index | integer |  |
transaction | nft_transfer | jsonb |  |
transaction | itemized_transfer | jsonb |  |
transaction | transaction_record_bytes | bytea |  |
transaction | max_custom_fees | bytea[] |  |
transaction | batch_key | bytea |  |
transaction | inner_transactions | bigint[] |  |
transaction | high_volume | boolean | not null | false
transaction | congestion_pricing_multiplier | bigint |  |
transaction | high_volume_pricing_multiplier | bigint |  |
transaction_signature | consensus_timestamp | bigint | not null |
transaction_signature | public_key_prefix | bytea | not null |
transaction_signature | entity_id | bigint |  |
transaction_signature | signature | bytea | not null |
transaction_signature | type | smallint |  |
`

// wantIndexes is every index of those tables (primary keys included), as
// pg_indexes shows it without the schema.
const wantIndexes = `
custom_fee | CREATE UNIQUE INDEX custom_fee_pkey ON custom_fee USING btree (entity_id)
entity | CREATE INDEX entity__alias ON entity USING btree (alias) WHERE (alias IS NOT NULL)
entity | CREATE INDEX entity__evm_address ON entity USING btree (evm_address) WHERE (evm_address IS NOT NULL)
entity | CREATE INDEX entity__public_key_type ON entity USING btree (public_key, type) WHERE (public_key IS NOT NULL)
entity | CREATE INDEX entity__type_id ON entity USING btree (type, id)
entity | CREATE UNIQUE INDEX entity_pkey ON entity USING btree (id)
schedule | CREATE INDEX schedule__creator_account_id ON schedule USING btree (creator_account_id DESC)
schedule | CREATE UNIQUE INDEX schedule_pkey ON schedule USING btree (schedule_id)
topic | CREATE UNIQUE INDEX topic_pkey ON topic USING btree (id)
topic_message | CREATE UNIQUE INDEX topic_message__topic_id_seqnum ON topic_message USING btree (topic_id, sequence_number)
topic_message | CREATE INDEX topic_message__topic_id_timestamp ON topic_message USING btree (topic_id, consensus_timestamp)
topic_message_lookup | CREATE UNIQUE INDEX topic_message_lookup_pkey ON topic_message_lookup USING btree (topic_id, partition)
transaction | CREATE INDEX transaction__payer_account_id_consensus_ns ON transaction USING btree (payer_account_id, consensus_timestamp)
transaction | CREATE INDEX transaction__transaction_id ON transaction USING btree (valid_start_ns, payer_account_id)
transaction | CREATE INDEX transaction__type_consensus_timestamp ON transaction USING btree (type, consensus_timestamp)
transaction | CREATE UNIQUE INDEX transaction_pkey ON transaction USING btree (consensus_timestamp)
transaction_signature | CREATE INDEX transaction_signature__entity_id ON transaction_signature USING btree (entity_id DESC, consensus_timestamp DESC)
`

// wantConstraints: primary keys only (the unique (topic_id, sequence_number)
// is an index, not a constraint; topic_message and transaction_signature have no key).
const wantConstraints = `
custom_fee | custom_fee_pkey | p
entity | entity_pkey | p
schedule | schedule_pkey | p
topic | topic_pkey | p
topic_message_lookup | topic_message_lookup_pkey | p
transaction | transaction_pkey | p
`

// wantTypes is docs/reference/schema.md §1.1 (the enums we use, labels in order) and §1.2.
const wantTypes = `
entity_id | domain | bigint
entity_num | domain | integer
entity_realm_num | domain | smallint
entity_type | enum | UNKNOWN,ACCOUNT,CONTRACT,FILE,TOPIC,TOKEN,SCHEDULE
entity_type_id | domain | character(1)
errata_type | enum | INSERT,DELETE
hbar_tinybars | domain | bigint
nanos_timestamp | domain | bigint
`

const wantOptions = `
topic_message | autovacuum_vacuum_insert_scale_factor=0,autovacuum_vacuum_insert_threshold=6000000
`

// rows runs a query whose rows are one text column each and returns them as
// lines, with a leading newline to match the constants above.
func rows(t *testing.T, b *bun.DB, query string, args ...any) string {
	t.Helper()
	rs, err := b.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var sb strings.Builder
	sb.WriteString("\n")
	for rs.Next() {
		var line string
		if err := rs.Scan(&line); err != nil {
			t.Fatal(err)
		}
		sb.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// checkSchema compares the schema of b with docs/reference/schema.md.
func checkSchema(t *testing.T, b *bun.DB) {
	t.Helper()
	tables := bun.In(db.Tables)
	for _, c := range []struct{ name, want, query string }{
		{"columns", wantColumns, `
			select c.table_name || ' | ' || c.column_name || ' | ' || format_type(a.atttypid, a.atttypmod) || ' | ' ||
			       case c.is_nullable when 'NO' then 'not null' else '' end || ' | ' || coalesce(c.column_default, '')
			from information_schema.columns c
			join pg_attribute a on a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
			                   and a.attname = c.column_name
			where c.table_schema = current_schema() and c.table_name in (?)
			order by c.table_name, c.ordinal_position`},
		{"indexes", wantIndexes, `
			select tablename || ' | ' || replace(indexdef, ' ON ' || quote_ident(schemaname) || '.', ' ON ')
			from pg_indexes
			where schemaname = current_schema() and tablename in (?)
			order by tablename, indexname`},
		{"constraints", wantConstraints, `
			select conrelid::regclass::text || ' | ' || conname || ' | ' || contype::text
			from pg_constraint
			where conrelid::regclass::text in (?) and contype <> 'n'
			order by 1`},
		{"options", wantOptions, `
			select relname || ' | ' || array_to_string(reloptions, ',')
			from pg_class
			where relnamespace = current_schema()::regnamespace and relname in (?) and reloptions is not null
			order by relname`},
	} {
		if diff := cmp.Diff(c.want, rows(t, b, c.query, tables)); diff != "" {
			t.Errorf("%s differ from docs/reference/schema.md (-want +got):\n%s", c.name, diff)
		}
	}
	typeNames := bun.In([]string{"entity_type", "errata_type", "nanos_timestamp", "entity_id", "hbar_tinybars",
		"entity_num", "entity_realm_num", "entity_type_id"})
	got := rows(t, b, `
		select t.typname || ' | ' ||
		       case t.typtype when 'd' then 'domain | ' || format_type(t.typbasetype, t.typtypmod)
		       else 'enum | ' || (select string_agg(e.enumlabel, ',' order by e.enumsortorder)
		                          from pg_enum e where e.enumtypid = t.oid) end
		from pg_type t
		where t.typnamespace = current_schema()::regnamespace and t.typname in (?)
		order by t.typname`, typeNames)
	if diff := cmp.Diff(wantTypes, got); diff != "" {
		t.Errorf("types differ from docs/reference/schema.md (-want +got):\n%s", diff)
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	for name, prepare := range map[string]bool{"prepared": true, "simple protocol": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, _ := testdb.Empty(t)
			d, err := db.Open(db.Options{URL: url, Prepare: prepare})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			b := d.Bun()
			ctx := context.Background()
			for i := 1; i <= 3; i++ {
				if err := db.Migrate(ctx, b); err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
			}
			checkSchema(t, b)

			ms, err := db.Migrations()
			if err != nil {
				t.Fatal(err)
			}
			var applied, distinct, groups int
			if err := b.QueryRowContext(ctx, "select count(*), count(distinct name), count(distinct group_id) from mirrorql_migrations").
				Scan(&applied, &distinct, &groups); err != nil {
				t.Fatal(err)
			}
			if n := len(ms.Sorted()); applied != n || distinct != n || groups != 1 {
				t.Errorf("mirrorql_migrations: %d rows, %d names, %d groups; want %d, %d, 1", applied, distinct, groups, n, n)
			}
		})
	}
}

// TestMigrateConcurrently: replicas starting together must not trip over each other.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	_, b := testdb.Empty(t)
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- db.Migrate(context.Background(), b) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	checkSchema(t, b)
}

// TestMigrateOverMirrorNode: against a database whose tables already exist
// (the mirror node's own), Migrate creates only what is missing and alters
// nothing: not the existing tables' columns, not their indexes.
func TestMigrateOverMirrorNode(t *testing.T) {
	t.Parallel()
	_, b := testdb.Empty(t)
	ctx := context.Background()
	if _, err := b.DB.ExecContext(ctx, `
		create type entity_type as enum ('UNKNOWN', 'ACCOUNT', 'CONTRACT', 'FILE', 'TOPIC', 'TOKEN', 'SCHEDULE');
		create domain nanos_timestamp as bigint;
		create table topic_message (consensus_timestamp nanos_timestamp not null, topic_id bigint not null, extra text);
		create index topic_message__other on topic_message (consensus_timestamp);
		create table schedule (schedule_id bigint primary key);
	`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, b); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{
		"topic_message": "\nconsensus_timestamp\ntopic_id\nextra\n",
		"schedule":      "\nschedule_id\n",
		"topic":         "\nadmin_key\ncreated_timestamp\nid\nfee_exempt_key_list\nfee_schedule_key\nsubmit_key\ntimestamp_range\n",
	} {
		got := rows(t, b, "select column_name::text from information_schema.columns where table_schema = current_schema() and table_name = ? order by ordinal_position", table)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s columns (-want +got):\n%s", table, diff)
		}
	}
	if got := rows(t, b, "select indexname::text from pg_indexes where schemaname = current_schema() and tablename in ('topic_message', 'schedule') order by 1"); got != "\nschedule_pkey\ntopic_message__other\n" {
		t.Errorf("indexes of the existing tables changed: %q", got)
	}
}

// TestMigrateReadOnly: a login that may not create anything (the mirror
// node's mirror_api) passes when the schema is there and fails clearly when not.
func TestMigrateReadOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		migrated bool
		wantErr  string
	}{
		{"migrated", true, ""},
		{"empty", false, "missing table(s) topic_message, topic_message_lookup, transaction, entity, topic, custom_fee, schedule, transaction_signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url, b := testdb.Empty(t)
			ctx := context.Background()
			if c.migrated {
				if err := db.Migrate(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			var role string
			if err := b.QueryRowContext(ctx, "select current_database() || '_ro'").Scan(&role); err != nil {
				t.Fatal(err)
			}
			if _, err := b.ExecContext(ctx, "create role ? nologin", bun.Ident(role)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_, _ = b.ExecContext(context.Background(), "drop owned by ?; drop role ?", bun.Ident(role), bun.Ident(role))
			})
			if _, err := b.ExecContext(ctx, "revoke create on schema public from public; grant select on all tables in schema public to ?", bun.Ident(role)); err != nil {
				t.Fatal(err)
			}
			ro := openAs(t, url, role)
			err := db.Migrate(ctx, ro)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// openAs opens url as role: the admin user logs in and becomes role at once.
func openAs(t *testing.T, url, role string) *bun.DB {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery += "&options=" + strings.ReplaceAll(neturl.QueryEscape("-c role="+role), "+", "%20")
	d, err := db.Open(db.Options{URL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.Bun()
}

// TestConformanceData: every conformance case's data.sql loads, unchanged,
// into a freshly migrated database, and fills the tables meta.json names.
func TestConformanceData(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "tests", "testdata", "conformance", "*", "data.sql"))
	if len(dirs) == 0 {
		t.Fatal("no tests/testdata/conformance/*/data.sql (see tests/testdata/README.md)")
	}
	for _, file := range dirs {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				Rows map[string]int `json:"rows"`
			}
			if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
				if err := json.Unmarshal(b, &meta); err != nil {
					t.Fatalf("meta.json: %v", err)
				}
			}
			_, b := testdb.New(t)
			ctx := context.Background()
			if err := testdb.LoadDump(ctx, b, string(data)); err != nil {
				t.Fatalf("loading data.sql: %v", err)
			}
			for table, want := range meta.Rows {
				var got int
				if err := b.QueryRowContext(ctx, "select count(*) from ?", bun.Ident(table)).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s: %d rows, meta.json says %d", table, got, want)
				}
			}
		})
	}
}

// repoRoot is the directory of go.mod above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}
