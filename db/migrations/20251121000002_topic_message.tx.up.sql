-- topic_message and topic_message_lookup (schema.md §2.1, §2.2).
-- A table that already exists (a real mirror node database, or an earlier
-- run) is left untouched, indexes included.

do $$
begin
  if to_regclass('topic_message') is null then
    create table topic_message (
      consensus_timestamp    nanos_timestamp not null,
      message                bytea           not null,
      running_hash           bytea           not null,
      sequence_number        bigint          not null,
      running_hash_version   smallint,
      chunk_num              integer,
      chunk_total            integer,
      payer_account_id       entity_id,
      valid_start_timestamp  nanos_timestamp,
      topic_id               bigint          not null,
      initial_transaction_id bytea
    ) with (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 6000000);

    -- No primary key: the mirror node dropped topic_message_pkey in V1.93.1.
    create unique index topic_message__topic_id_seqnum on topic_message (topic_id, sequence_number);
    create index topic_message__topic_id_timestamp on topic_message (topic_id, consensus_timestamp);
  end if;

  if to_regclass('topic_message_lookup') is null then
    create table topic_message_lookup (
      partition             text      not null,
      sequence_number_range int8range not null,
      timestamp_range       int8range not null,
      topic_id              bigint    not null,
      constraint topic_message_lookup_pkey primary key (topic_id, partition)
    );
    -- No gist (topic_id, sequence_number_range) index: v1 has none.
  end if;
end
$$;
