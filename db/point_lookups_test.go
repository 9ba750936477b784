package db_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

// TestPointLookupsCoalesced: many concurrent lookups by sequence number and
// by timestamp, through a pool whose coalescers share statements, each get
// what the same lookup gets alone — found, not found, or not found because
// ambiguous — and fewer statements are sent than lookups answered.
func TestPointLookupsCoalesced(t *testing.T) {
	t.Parallel()
	// Its rows lie in 1970 and some have no payer, which v1's tables hold and the
	// importer's v2 schema refuses (closed monthly partitions, payer
	// NOT NULL): a v1 test, in both of make test's runs. The v2 reads are held
	// to v1's on rows v2 holds (layouts_test.go, tests/variants_test.go).
	url, b := testdb.NewLayout(t, testdb.LayoutV1)
	ctx := context.Background()
	// Topic 7: sequence numbers 1…40 at 1000+s, each with its successful
	// submit transaction, except: 5's transaction failed (not found by
	// timestamp); 10's timestamp holds a second message (ambiguous); 20
	// has no transaction at all.
	_, err := b.DB.ExecContext(ctx, `
		INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash,
			running_hash_version, chunk_num, chunk_total, payer_account_id, valid_start_timestamp)
		SELECT 7, s, 1000 + s, int8send(s), '\x02', CASE WHEN s % 2 = 0 THEN 3 END,
			CASE WHEN s % 3 = 0 THEN 1 END, CASE WHEN s % 3 = 0 THEN 2 END,
			CASE WHEN s % 4 = 0 THEN 98 END, CASE WHEN s % 4 = 0 THEN 5 END
		FROM generate_series(1, 40) s;
		INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash)
		VALUES (7, 100, 1010, '\x03', '\x04');
		INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		SELECT 1000 + s, 27, CASE WHEN s = 5 THEN 21 ELSE 22 END, 98, 1, 7
		FROM generate_series(1, 40) s WHERE s <> 20`)
	if err != nil {
		t.Fatal(err)
	}
	alone := openPool(t, db.Options{URL: url, PoolSize: 2, Prepare: true})
	shared := openPool(t, db.Options{URL: url, PoolSize: 4, Prepare: true, Coalesce: 1})
	rec := &stmtlog.Log{}
	shared.Record(rec)
	var mode string
	if err := shared.Bun().QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil || mode != "force_generic_plan" {
		t.Errorf("plan_cache_mode of a preparing pool: %q, %v", mode, err)
	}

	type answer struct {
		m   *model.TopicMessage
		err error
	}
	want := map[int64][2]answer{} // by sequence number, by timestamp 1000+key
	for k := int64(-1); k <= 42; k++ {
		m1, err1 := alone.MessageBySequence(ctx, 7, k)
		m2, err2 := alone.MessageByTimestamp(ctx, model.Timestamp(1000+k))
		want[k] = [2]answer{{m1, err1}, {m2, err2}}
	}
	for _, k := range []int64{5, 10, 20, -1, 41} {
		if want[k][1].err != app.ErrNotFound {
			t.Fatalf("by timestamp %d alone: %v, want not found", 1000+k, want[k][1].err)
		}
	}
	if want[10][0].m == nil || want[3][1].m == nil {
		t.Fatal("the lookups alone found nothing")
	}

	const workers, rounds = 32, 60
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				k := int64((w*7+i*13)%44) - 1
				var got answer
				if (w+i)%2 == 0 {
					got.m, got.err = shared.MessageBySequence(ctx, 7, k)
				} else {
					got.m, got.err = shared.MessageByTimestamp(ctx, model.Timestamp(1000+k))
				}
				exp := want[k][(w+i)%2]
				if got.err != exp.err || !cmp.Equal(got.m, exp.m) {
					t.Errorf("lookup %d (%d): %v %v, alone %v %v", k, (w+i)%2, got.m, got.err, exp.m, exp.err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sent := len(rec.Take())
	t.Logf("%d lookups in %d statements", workers*rounds, sent)
	if sent >= workers*rounds {
		t.Errorf("%d statements for %d concurrent lookups: none shared", sent, workers*rounds)
	}
}
