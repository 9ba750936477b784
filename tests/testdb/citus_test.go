package testdb

import (
	"context"
	"testing"
)

// TestCitusDistribution: the v2-citus variant is a real Citus database,
// its eight tables distributed by the importer's columns and co-located,
// their shards on both workers, and a statement on one topic routed to one
// shard.
func TestCitusDistribution(t *testing.T) {
	t.Parallel()
	_, b := NewLayout(t, "v2-citus")
	ctx := context.Background()
	var got string
	if err := b.QueryRowContext(ctx, `select string_agg(logicalrelid::text || ':' || column_to_column_name(logicalrelid, partkey), ' ' order by logicalrelid::text)
		from pg_dist_partition where logicalrelid::text not like '%\_p____\___'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	const want = "custom_fee:entity_id entity:id schedule:schedule_id topic:id topic_message:topic_id " +
		"topic_message_lookup:topic_id transaction:payer_account_id transaction_signature:entity_id"
	if got != want {
		t.Errorf("distribution columns:\n got %s\nwant %s", got, want)
	}
	var colocations, workers int
	if err := b.QueryRowContext(ctx, `select count(distinct colocationid) from pg_dist_partition`).Scan(&colocations); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, `select count(distinct nodeport) from pg_dist_shard_placement`).Scan(&workers); err != nil {
		t.Fatal(err)
	}
	if colocations != 1 || workers != 2 {
		t.Errorf("%d colocation groups over %d workers, want 1 over 2", colocations, workers)
	}
	var plan string
	if err := b.QueryRowContext(ctx, `explain (costs off) select * from topic_message where topic_id = 7`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if plan != "Custom Scan (Citus Adaptive)" {
		t.Errorf("plan's first line %q, want Citus's", plan)
	}
}
