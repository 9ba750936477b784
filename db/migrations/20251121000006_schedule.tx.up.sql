-- schedule and transaction_signature (schema.md §2.6, §2.7).

do $$
begin
  if to_regclass('schedule') is null then
    create table schedule (
      consensus_timestamp bigint  not null,
      creator_account_id  bigint  not null,
      executed_timestamp  bigint,
      payer_account_id    bigint  not null,
      schedule_id         bigint  not null,
      transaction_body    bytea   not null,
      expiration_time     bigint,
      wait_for_expiry     boolean not null default false,
      constraint schedule_pkey primary key (schedule_id)
    );

    create index schedule__creator_account_id on schedule (creator_account_id desc);
  end if;

  if to_regclass('transaction_signature') is null then
    -- No primary key, as in the mirror node.
    create table transaction_signature (
      consensus_timestamp bigint   not null,
      public_key_prefix   bytea    not null,
      entity_id           bigint,
      signature           bytea    not null,
      type                smallint
    );

    create index transaction_signature__entity_id on transaction_signature (entity_id desc, consensus_timestamp desc);
  end if;
end
$$;
