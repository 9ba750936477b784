-- transaction (schema.md §2.8), with every column of the mirror node table.

do $$
begin
  if to_regclass('transaction') is null then
    create table transaction (
      consensus_timestamp            bigint        not null,
      type                           smallint      not null,
      result                         smallint      not null,
      payer_account_id               entity_id     not null,
      valid_start_ns                 bigint        not null,
      valid_duration_seconds         bigint,
      node_account_id                entity_id,
      entity_id                      entity_id,
      initial_balance                bigint                 default 0,
      max_fee                        hbar_tinybars,
      charged_tx_fee                 bigint,
      memo                           bytea,
      transaction_hash               bytea,
      transaction_bytes              bytea,
      scheduled                      boolean       not null default false,
      nonce                          integer       not null default 0,
      parent_consensus_timestamp     bigint,
      errata                         errata_type,
      index                          integer,
      nft_transfer                   jsonb,
      itemized_transfer              jsonb,
      transaction_record_bytes       bytea,
      max_custom_fees                bytea[],
      batch_key                      bytea,
      inner_transactions             bigint[],
      high_volume                    boolean       not null default false,
      congestion_pricing_multiplier  bigint,
      high_volume_pricing_multiplier bigint,
      constraint transaction_pkey primary key (consensus_timestamp)
    );

    create index transaction__payer_account_id_consensus_ns on transaction (payer_account_id, consensus_timestamp);
    create index transaction__transaction_id on transaction (valid_start_ns, payer_account_id);
    create index transaction__type_consensus_timestamp on transaction (type, consensus_timestamp);
  end if;
end
$$;
