-- Types of the mirror node v1 schema (schema.md §1) that our tables use.
-- Each one is created only when absent: against a real mirror node database
-- they already exist and are left exactly as they are.

do $$
begin
  if to_regtype('entity_type') is null then
    create type entity_type as enum ('UNKNOWN', 'ACCOUNT', 'CONTRACT', 'FILE', 'TOPIC', 'TOKEN', 'SCHEDULE');
  end if;
  if to_regtype('errata_type') is null then
    create type errata_type as enum ('INSERT', 'DELETE');
  end if;

  -- Legacy domains over base types (§1.2).
  if to_regtype('nanos_timestamp') is null then
    create domain nanos_timestamp as bigint;
  end if;
  if to_regtype('entity_id') is null then
    create domain entity_id as bigint;
  end if;
  if to_regtype('hbar_tinybars') is null then
    create domain hbar_tinybars as bigint;
  end if;
  if to_regtype('entity_num') is null then
    create domain entity_num as integer;
  end if;
  if to_regtype('entity_realm_num') is null then
    create domain entity_realm_num as smallint;
  end if;
  if to_regtype('entity_type_id') is null then
    create domain entity_type_id as character(1);
  end if;
end
$$;
