-- topic and custom_fee (schema.md §2.4, §2.5). The *_history tables are not read and not created.

do $$
begin
  if to_regclass('topic') is null then
    create table topic (
      admin_key           bytea,
      created_timestamp   bigint,
      id                  bigint    not null,
      fee_exempt_key_list bytea,
      fee_schedule_key    bytea,
      submit_key          bytea,
      timestamp_range     int8range not null,
      constraint topic_pkey primary key (id)
    );
  end if;

  if to_regclass('custom_fee') is null then
    create table custom_fee (
      fixed_fees      jsonb,
      fractional_fees jsonb,
      royalty_fees    jsonb,
      timestamp_range int8range not null,
      entity_id       bigint    not null,
      constraint custom_fee_pkey primary key (entity_id)
    );
  end if;
end
$$;
