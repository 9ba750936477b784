-- entity (schema.md §2.3). entity_history is not read by mirrorql and is not created.

do $$
begin
  if to_regclass('entity') is null then
    create table entity (
      auto_renew_account_id            bigint,
      auto_renew_period                bigint,
      created_timestamp                bigint,
      deleted                          boolean,
      expiration_timestamp             bigint,
      id                               bigint            not null,
      key                              bytea,
      memo                             text              not null default '',
      num                              bigint            not null,
      public_key                       character varying,
      proxy_account_id                 bigint,
      realm                            bigint            not null,
      shard                            bigint            not null,
      receiver_sig_required            boolean,
      max_automatic_token_associations integer,
      timestamp_range                  int8range         not null,
      type                             entity_type       not null default 'UNKNOWN',
      alias                            bytea,
      ethereum_nonce                   bigint                     default 0,
      evm_address                      bytea,
      decline_reward                   boolean           not null default false,
      staked_account_id                bigint,
      staked_node_id                   bigint                     default -1,
      stake_period_start               bigint                     default -1,
      obtainer_id                      bigint,
      permanent_removal                boolean,
      balance                          bigint,
      balance_timestamp                bigint,
      delegation_address               bytea,
      constraint entity_pkey primary key (id)
    );

    create index entity__type_id on entity (type, id);
    create index entity__alias on entity (alias) where alias is not null;
    create index entity__evm_address on entity (evm_address) where evm_address is not null;
    create index entity__public_key_type on entity (public_key, type) where public_key is not null;
  end if;
end
$$;
