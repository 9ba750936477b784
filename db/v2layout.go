package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// V2Options shape the mirror node's v2 layout that CreateV2 builds: the
// importer's own (closed monthly partitions from its partitionStartDate,
// 2019-09, to a month ahead and more) by default, or one of the variants a
// reader meets (docs/layouts.md): a DEFAULT partition, months without a
// partition, the lookup left empty, a Citus coordinator.
type V2Options struct {
	// From is the month of the first partition (the importer's
	// partitionStartDate) and Through that of the last; every partition is
	// closed, [month, next month), as the importer makes them.
	From    time.Time
	Through time.Time
	// Default adds a DEFAULT partition to both tables, an operator's home
	// for rows outside the monthly ranges.
	Default bool
	// Missing are months between From and Through left without a partition.
	Missing []time.Time
	// KeepLookup has topic_message_lookup kept on every insert, as the
	// importer keeps it (persist.topicMessageLookups): a trigger stands in for
	// its TopicMessageLookupEntityListener. Off, the lookup stays empty, as
	// the importer leaves it outside its v2 chart. Bulk loads that skip
	// triggers (session_replication_role = replica) call RebuildLookup.
	KeepLookup bool
	// Citus installs a stand-in named citus (pg_stat_statements renamed in
	// the catalog: plain PostgreSQL has no Citus), so that the service finds
	// the extension and reads as on a Citus coordinator.
	Citus bool
}

// DefaultV2Options: the importer's layout, partitions by month from 2019-09
// to a year from now, the lookup kept.
func DefaultV2Options() V2Options {
	now := time.Now().UTC()
	return V2Options{
		From:       time.Date(2019, 9, 1, 0, 0, 0, 0, time.UTC),
		Through:    time.Date(now.Year()+1, now.Month(), 1, 0, 0, 0, 0, time.UTC),
		KeepLookup: true,
	}
}

// v2SchemaDDL: the eight tables mirrorql reads as the mirror node importer's v2 migrations
// (0.154.0, Citus's distribution calls left out) create them: plain bigint,
// columns in alphabetical order, keys named <table>__pk (topic keeps
// topic_pkey), errata of the errata_type enum, topic_message and transaction
// partitioned by consensus_timestamp with no primary key. The monthly
// partitions are made apart (v2PartitionsDDL). tests/testdata/upstream-catalog
// holds the catalog listing this must match (TestFixtureIsUpstreamSchema).
const v2SchemaDDL = `create extension if not exists btree_gist;

create type entity_type as enum ('UNKNOWN', 'ACCOUNT', 'CONTRACT', 'FILE', 'TOPIC', 'TOKEN', 'SCHEDULE');
create type errata_type as enum ('INSERT', 'DELETE');

create table custom_fee (
  entity_id       bigint    not null,
  fixed_fees      jsonb,
  fractional_fees jsonb,
  royalty_fees    jsonb,
  timestamp_range int8range not null,
  constraint custom_fee__pk primary key (entity_id)
);

create table entity (
  alias                            bytea,
  auto_renew_account_id            bigint,
  auto_renew_period                bigint,
  balance                          bigint,
  balance_timestamp                bigint,
  created_timestamp                bigint,
  decline_reward                   boolean     not null default false,
  delegation_address               bytea,
  deleted                          boolean,
  ethereum_nonce                   bigint      default 0,
  evm_address                      bytea,
  expiration_timestamp             bigint,
  id                               bigint      not null,
  key                              bytea,
  max_automatic_token_associations integer,
  memo                             text        not null default '',
  num                              bigint      not null,
  obtainer_id                      bigint,
  permanent_removal                boolean,
  proxy_account_id                 bigint,
  public_key                       character varying,
  realm                            bigint      not null,
  receiver_sig_required            boolean,
  shard                            bigint      not null,
  stake_period_start               bigint      default -1,
  staked_account_id                bigint,
  staked_node_id                   bigint      default -1,
  timestamp_range                  int8range   not null,
  type                             entity_type not null default 'UNKNOWN',
  constraint entity__pk primary key (id)
);
create index entity__alias on entity (alias) where alias is not null;
create index entity__evm_address on entity (evm_address) where evm_address is not null;
create index entity__public_key_type on entity (public_key, type) where public_key is not null;
create index entity__type_id on entity (type, id);

create table schedule (
  consensus_timestamp bigint  not null,
  creator_account_id  bigint  not null,
  executed_timestamp  bigint,
  expiration_time     bigint,
  payer_account_id    bigint  not null,
  schedule_id         bigint  not null,
  transaction_body    bytea   not null,
  wait_for_expiry     boolean not null default false,
  constraint schedule__pk primary key (schedule_id)
);
create index schedule__creator_account_id on schedule (creator_account_id desc);

create table topic (
  admin_key           bytea,
  created_timestamp   bigint,
  fee_exempt_key_list bytea,
  fee_schedule_key    bytea,
  id                  bigint    not null,
  submit_key          bytea,
  timestamp_range     int8range not null,
  constraint topic_pkey primary key (id)
);

create table topic_message (
  chunk_num              integer,
  chunk_total            integer,
  consensus_timestamp    bigint   not null,
  initial_transaction_id bytea,
  message                bytea    not null,
  payer_account_id       bigint   not null,
  running_hash           bytea    not null,
  running_hash_version   smallint,
  sequence_number        bigint   not null,
  topic_id               bigint   not null,
  valid_start_timestamp  bigint
) partition by range (consensus_timestamp);
create index topic_message__topic_id_seqnum on topic_message (topic_id, sequence_number);
create index topic_message__topic_id_timestamp on topic_message (topic_id, consensus_timestamp);

create table topic_message_lookup (
  partition             text      not null,
  sequence_number_range int8range not null,
  timestamp_range       int8range not null,
  topic_id              bigint    not null,
  constraint topic_message_lookup__pk primary key (topic_id, partition)
);
create index topic_message_lookup__topic_sequence_number_range
  on topic_message_lookup using gist (topic_id, sequence_number_range);

create table transaction (
  batch_key                      bytea,
  charged_tx_fee                 bigint,
  congestion_pricing_multiplier  bigint,
  consensus_timestamp            bigint      not null,
  entity_id                      bigint,
  errata                         errata_type,
  high_volume                    boolean     not null default false,
  high_volume_pricing_multiplier bigint,
  index                          integer,
  initial_balance                bigint      default 0,
  inner_transactions             bigint[],
  itemized_transfer              jsonb,
  max_custom_fees                bytea[],
  max_fee                        bigint,
  memo                           bytea,
  nft_transfer                   jsonb,
  node_account_id                bigint,
  nonce                          integer     not null default 0,
  parent_consensus_timestamp     bigint,
  payer_account_id               bigint      not null,
  result                         smallint    not null,
  scheduled                      boolean     not null default false,
  transaction_bytes              bytea,
  transaction_hash               bytea,
  transaction_record_bytes       bytea,
  type                           smallint    not null,
  valid_duration_seconds         bigint,
  valid_start_ns                 bigint      not null
) partition by range (consensus_timestamp);
create index transaction__consensus_timestamp on transaction (consensus_timestamp);
create index transaction__payer_account_id_consensus_timestamp on transaction (payer_account_id, consensus_timestamp);
create index transaction__transaction_id on transaction (payer_account_id, valid_start_ns);
create index transaction__type_consensus_timestamp on transaction (type, consensus_timestamp);

create table transaction_signature (
  consensus_timestamp bigint   not null,
  entity_id           bigint,
  public_key_prefix   bytea    not null,
  signature           bytea    not null,
  type                smallint
);
create index transaction_signature__entity_id on transaction_signature (entity_id desc, consensus_timestamp desc);
`

// CreateV2 builds the mirror node's v2 layout (docs/reference/v2-layout.md)
// in an empty database, without Citus: the eight tables mirrorql reads as
// the importer's v2 migrations create them (v2SchemaDDL), the monthly
// partitions, and the options' variant. Tests, the demo and the benchmarks
// use it; the service itself never changes a layout.
func CreateV2(ctx context.Context, b *bun.DB, o V2Options) error {
	if o.From.IsZero() || o.Through.Before(o.From) {
		return fmt.Errorf("v2 layout: partitions from %v through %v", o.From, o.Through)
	}
	missing := make([]string, len(o.Missing))
	for i, m := range o.Missing {
		missing[i] = m.Format("2006-01-02")
	}
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// The months travel as settings of the transaction, read by the
	// partitions' DO block: every statement's text is fixed.
	if _, err := tx.ExecContext(ctx, "select set_config('mirrorql.v2_from', ?, true), set_config('mirrorql.v2_through', ?, true), "+
		"set_config('mirrorql.v2_missing', ?, true), set_config('mirrorql.v2_default', ?, true)",
		o.From.Format("2006-01-02"), o.Through.Format("2006-01-02"), "{"+strings.Join(missing, ",")+"}",
		strconv.FormatBool(o.Default)); err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	if _, err := tx.ExecContext(ctx, v2SchemaDDL); err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	if _, err := tx.ExecContext(ctx, v2PartitionsDDL); err != nil {
		return fmt.Errorf("v2 layout: partitions: %w", err)
	}
	if o.KeepLookup {
		if _, err := tx.ExecContext(ctx, keepLookupDDL); err != nil {
			return fmt.Errorf("v2 layout: lookup trigger: %w", err)
		}
	}
	if o.Citus {
		if _, err := tx.ExecContext(ctx, standInCitusDDL); err != nil {
			return fmt.Errorf("v2 layout: stand-in citus: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	return nil
}

// v2PartitionsDDL creates the monthly partitions of both tables, named as
// the importer names them (<table>_pYYYY_MM), closed, from the month in the
// setting mirrorql.v2_from through the one in mirrorql.v2_through but those
// in mirrorql.v2_missing, and a DEFAULT partition (<table>_default) when
// mirrorql.v2_default is true.
const v2PartitionsDDL = `do $$
declare
  first   date    := current_setting('mirrorql.v2_from')::date;
  last    date    := current_setting('mirrorql.v2_through')::date;
  missing date[]  := current_setting('mirrorql.v2_missing')::date[];
  dflt    boolean := current_setting('mirrorql.v2_default')::boolean;
  m       date;
  t       text;
begin
  foreach t in array array['topic_message', 'transaction'] loop
    m := first;
    while m <= last loop
      if not m = any(missing) then
        execute format('create table %I partition of %I for values from (%s) to (%s)',
                       t || to_char(m, '"_p"YYYY_MM'), t,
                       extract(epoch from m)::bigint * 1000000000,
                       extract(epoch from (m + interval '1 month'))::bigint * 1000000000);
      end if;
      m := m + interval '1 month';
    end loop;
    if dflt then
      execute format('create table %I partition of %I default', t || '_default', t);
    end if;
  end loop;
end
$$`

// standInCitusDDL makes an extension named citus appear in pg_extension,
// which is all the service asks of a Citus coordinator (detectLayoutSQL).
const standInCitusDDL = `create extension pg_stat_statements;
set local allow_system_table_mods = on;
update pg_extension set extname = 'citus' where extname = 'pg_stat_statements'`

// DetachPartition detaches the partitions of month from topic_message and
// transaction, as an operator archiving old months does: their rows stay in
// tables of their own, which no read of the parent sees.
func DetachPartition(ctx context.Context, b bun.IDB, month time.Time) error {
	for _, table := range []string{"topic_message", "transaction"} {
		part := table + month.Format("_p2006_01")
		if _, err := b.ExecContext(ctx, "alter table ? detach partition ?", bun.Ident(table), bun.Ident(part)); err != nil {
			return fmt.Errorf("detach %s: %w", part, err)
		}
	}
	return nil
}

// keepLookupDDL widens the (topic, partition) row of topic_message_lookup on
// every inserted message, as the importer's upsert does: ranges are
// half-open, [first, last + 1).
const keepLookupDDL = `
create function mirrorql_keep_topic_message_lookup() returns trigger language plpgsql as $$
begin
  insert into topic_message_lookup as l (partition, sequence_number_range, timestamp_range, topic_id)
  values (tg_table_name,
          int8range(new.sequence_number, new.sequence_number + 1),
          int8range(new.consensus_timestamp, new.consensus_timestamp + 1),
          new.topic_id)
  on conflict (topic_id, partition) do update
    set sequence_number_range = range_merge(l.sequence_number_range, excluded.sequence_number_range),
        timestamp_range = range_merge(l.timestamp_range, excluded.timestamp_range);
  return null;
end
$$;
create trigger topic_message_lookup_kept after insert on topic_message
  for each row execute function mirrorql_keep_topic_message_lookup();
`

// RebuildLookup writes topic_message_lookup anew from the messages, one row
// per topic and partition: after a bulk load that skipped the trigger.
func RebuildLookup(ctx context.Context, b bun.IDB) error {
	_, err := b.ExecContext(ctx, `truncate topic_message_lookup;
insert into topic_message_lookup (partition, sequence_number_range, timestamp_range, topic_id)
select tableoid::regclass::text, int8range(min(sequence_number), max(sequence_number) + 1),
       int8range(min(consensus_timestamp), max(consensus_timestamp) + 1), topic_id
from topic_message group by tableoid, topic_id`)
	if err != nil {
		return fmt.Errorf("rebuild topic_message_lookup: %w", err)
	}
	return nil
}
