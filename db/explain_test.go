package db_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

// TestQueriesUseIndexes runs every query-layer function, then EXPLAINs each
// statement it sent with sequential scans disabled: a plan that still scans
// a table sequentially has no index to use.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	_, b := testdb.New(t)
	rec := &stmtlog.Log{}
	d := db.Wrap(b)
	d.Record(rec)
	ctx := context.Background()
	seq := &model.Range{Lo: 6, Hi: math.MaxInt64}
	ts := &model.Range{Lo: math.MinInt64, Hi: 99}
	ids := []model.EntityID{100, 101}
	calls := map[string]func() error{
		"MessageBySequence":  func() error { _, err := d.MessageBySequence(ctx, 7, 1); return ignoreNotFound(err) },
		"MessageByTimestamp": func() error { _, err := d.MessageByTimestamp(ctx, 5); return ignoreNotFound(err) },
		"MessagesByTimestamp": func() error {
			_, err := d.MessagesByTimestamp(ctx, []model.Timestamp{5, 6})
			return err
		},
		"MessagesOfTopic/sequence": func() error {
			_, err := d.MessagesOfTopic(ctx, app.MessageFilter{TopicID: 7, SequenceNumber: seq, Order: model.Desc, Limit: 25})
			return err
		},
		"MessagesOfTopic/timestamp": func() error {
			_, err := d.MessagesOfTopic(ctx, app.MessageFilter{TopicID: 7, Timestamp: ts, Order: model.Asc, Limit: 25})
			return err
		},
		"MessagesOfTopic/both": func() error {
			_, err := d.MessagesOfTopic(ctx, app.MessageFilter{TopicID: 7, SequenceNumber: seq, Timestamp: ts, Order: model.Desc, Limit: 25})
			return err
		},
		"TopicExists": func() error { _, err := d.TopicExists(ctx, 7); return err },
		"Topic":       func() error { _, err := d.Topic(ctx, 7); return ignoreNotFound(err) },
		"Topics": func() error {
			_, err := d.Topics(ctx, app.TopicFilter{ID: []model.Condition[model.EntityID]{{Op: model.OpGt, Value: 1}}, Limit: 25})
			return err
		},
		"TopicsByID": func() error { _, err := d.TopicsByID(ctx, ids); return err },
		"Schedules": func() error {
			_, err := d.Schedules(ctx, app.ScheduleFilter{ScheduleID: []model.Condition[model.EntityID]{{Op: model.OpGte, Value: 1}}, Limit: 25})
			return err
		},
		"Schedules/creator": func() error {
			_, err := d.Schedules(ctx, app.ScheduleFilter{CreatorAccountID: []model.Condition[model.EntityID]{{Op: model.OpEq, Value: 2}}, Limit: 25})
			return err
		},
		"SchedulesByID": func() error { _, err := d.SchedulesByID(ctx, ids); return err },
		"SignaturesOf":  func() error { _, err := d.SignaturesOf(ctx, ids); return err },
	}
	for name, call := range calls {
		rec.Take()
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, stmt := range rec.Take() {
			p := plan(t, b, stmt, seqScansOff)
			if strings.Contains(p, "Seq Scan") {
				t.Errorf("%s: sequential scan in the plan of\n%s %v\n%s", name, stmt.SQL, stmt.Args, p)
			}
		}
	}
}

func ignoreNotFound(err error) error {
	if err == app.ErrNotFound {
		return nil
	}
	return err
}

// seqScans says whether the planner may scan tables sequentially.
type seqScans bool

const (
	seqScansOff     seqScans = false // a plan that still scans a table sequentially has no index to use
	seqScansAllowed seqScans = true  // the planner's own choice, as the service gets it
)

// plan explains st on a connection of its own with the plan the service
// gets for it (explain.Plan: the generic plan of a prepared statement).
func plan(t *testing.T, b *bun.DB, st stmtlog.Statement, seq seqScans) string {
	t.Helper()
	ctx := context.Background()
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if seq == seqScansOff {
		// In a transaction of its own, so that on Citus the setting goes
		// with the statement to the workers, which plan their shards
		// (citus.propagate_set_commands; plain PostgreSQL keeps the
		// setting as a placeholder and ignores it).
		for _, set := range []string{"BEGIN", "SET LOCAL citus.propagate_set_commands = local", "SET LOCAL enable_seqscan = off"} {
			if _, err := conn.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		defer conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck
	}
	p, err := stmtlog.Plan(ctx, conn, st, "")
	if err != nil {
		t.Fatalf("explain %s: %v", st.SQL, err)
	}
	return p
}

// openPool opens a pool of the test's own with o, closed at cleanup.
func openPool(t *testing.T, o db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}
