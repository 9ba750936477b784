package db

import (
	"context"
	"fmt"

	"time"

	"github.com/uptrace/bun"
)

// V2Options shape the mirror node's v2 layout that CreateV2 builds.
type V2Options struct {
	// From is the month of the first partition (the mirror node's
	// partitionStartDate, 2019-09-01). The first partition also takes every
	// earlier timestamp (MINVALUE), and the last one every later one
	// (MAXVALUE), so that test data of any epoch has a home.
	From time.Time
	// Through is the month of the last partition (a year ahead in tests: the
	// importer creates partitions before they are needed).
	Through time.Time
	// KeepLookup has topic_message_lookup kept on every insert, as the
	// importer keeps it (persist.topicMessageLookups): a trigger stands in for
	// its TopicMessageLookupEntityListener. Bulk loads that skip triggers
	// (session_replication_role = replica) call RebuildLookup afterwards.
	KeepLookup bool
}

// DefaultV2Options: partitions by month from 2019-09 to a year from now,
// the lookup kept.
func DefaultV2Options() V2Options {
	now := time.Now().UTC()
	return V2Options{
		From:       time.Date(2019, 9, 1, 0, 0, 0, 0, time.UTC),
		Through:    time.Date(now.Year()+1, now.Month(), 1, 0, 0, 0, 0, time.UTC),
		KeepLookup: true,
	}
}

// CreateV2 builds the mirror node's v2 layout (docs/reference/v2-layout.md,
// from its importer migrations V2.0.x) in an empty database, without Citus:
// topic_message and transaction partitioned by month on consensus_timestamp
// (plain bigint, as v2 has it), v2's indexes on every partition (a
// non-unique (topic_id, sequence_number), no primary keys), the
// topic_message_lookup table with its gist index, then Migrate for the
// tables that v2 does not partition (Migrate leaves the existing ones as
// they are). Tests, the demo and the benchmarks use it; the service itself
// never changes a layout.
func CreateV2(ctx context.Context, b *bun.DB, o V2Options) error {
	if o.From.IsZero() || o.Through.Before(o.From) {
		return fmt.Errorf("v2 layout: partitions from %v through %v", o.From, o.Through)
	}
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// The months travel as settings of the transaction, read by the
	// partitions' DO block: every statement's text is fixed.
	if _, err := tx.ExecContext(ctx, "select set_config('mirrorql.v2_from', ?, true), set_config('mirrorql.v2_through', ?, true)",
		o.From.Format("2006-01-02"), o.Through.Format("2006-01-02")); err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	if _, err := tx.ExecContext(ctx, v2TablesDDL); err != nil {
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
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("v2 layout: %w", err)
	}
	return Migrate(ctx, b)
}

// v2TablesDDL: the partitioned tables, their indexes and the lookup
// (importer migrations V2.0.x).
const v2TablesDDL = `create extension if not exists btree_gist;
create table topic_message (
  consensus_timestamp    bigint   not null,
  message                bytea    not null,
  running_hash           bytea    not null,
  sequence_number        bigint   not null,
  running_hash_version   smallint,
  chunk_num              integer,
  chunk_total            integer,
  payer_account_id       bigint,
  valid_start_timestamp  bigint,
  topic_id               bigint   not null,
  initial_transaction_id bytea
) partition by range (consensus_timestamp);
create index topic_message__topic_id_timestamp on topic_message (topic_id, consensus_timestamp);
create index topic_message__topic_id_seqnum on topic_message (topic_id, sequence_number);

create table transaction (
  consensus_timestamp            bigint   not null,
  type                           smallint not null,
  result                         smallint not null,
  payer_account_id               bigint   not null,
  valid_start_ns                 bigint   not null,
  valid_duration_seconds         bigint,
  node_account_id                bigint,
  entity_id                      bigint,
  initial_balance                bigint            default 0,
  max_fee                        bigint,
  charged_tx_fee                 bigint,
  memo                           bytea,
  transaction_hash               bytea,
  transaction_bytes              bytea,
  scheduled                      boolean  not null default false,
  nonce                          integer  not null default 0,
  parent_consensus_timestamp     bigint,
  errata                         text,
  index                          integer,
  nft_transfer                   jsonb,
  itemized_transfer              jsonb,
  transaction_record_bytes       bytea,
  max_custom_fees                bytea[],
  batch_key                      bytea,
  inner_transactions             bigint[],
  high_volume                    boolean  not null default false,
  congestion_pricing_multiplier  bigint,
  high_volume_pricing_multiplier bigint
) partition by range (consensus_timestamp);
create index transaction__consensus_timestamp on transaction (consensus_timestamp);
create index transaction__payer_account_id_consensus_timestamp on transaction (payer_account_id, consensus_timestamp);
create index transaction__transaction_id on transaction (payer_account_id, valid_start_ns);
create index transaction__type_consensus_timestamp on transaction (type, consensus_timestamp);

create table topic_message_lookup (
  partition             text      not null,
  sequence_number_range int8range not null,
  timestamp_range       int8range not null,
  topic_id              bigint    not null,
  primary key (topic_id, partition)
);
create index topic_message_lookup__topic_sequence_number_range
  on topic_message_lookup using gist (topic_id, sequence_number_range);
`

// v2PartitionsDDL creates the monthly partitions of both tables, named as
// the importer names them (<table>_pYYYY_MM), from the month in the setting
// mirrorql.v2_from (its partition also takes every earlier time) through
// the one in mirrorql.v2_through (which also takes every later one).
const v2PartitionsDDL = `do $$
declare
  first date := current_setting('mirrorql.v2_from')::date;
  last  date := current_setting('mirrorql.v2_through')::date;
  m     date;
  t     text;
  lo    text;
  hi    text;
begin
  foreach t in array array['topic_message', 'transaction'] loop
    m := first;
    while m <= last loop
      lo := case when m = first then 'minvalue' else (extract(epoch from m)::bigint * 1000000000)::text end;
      hi := case when m = last then 'maxvalue'
                 else (extract(epoch from (m + interval '1 month'))::bigint * 1000000000)::text end;
      execute format('create table %I partition of %I for values from (%s) to (%s)',
                     t || to_char(m, '"_p"YYYY_MM'), t, lo, hi);
      m := m + interval '1 month';
    end loop;
  end loop;
end
$$`

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
