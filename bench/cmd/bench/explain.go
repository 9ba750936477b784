package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"mirrorql/app"
	"mirrorql/model"
	"mirrorql/tools/stmtlog"
)

// plan is the EXPLAIN (ANALYZE, BUFFERS) of one statement a route sent.
type plan struct {
	route string
	path  string // what sent it, as Markdown
	sql   string
	text  string
}

// explainPlans serves one request of each route of floorPaths through the
// service's handler in process, records the statements they send and
// explains each: the plans are those of the exact SQL the service issues.
func explainPlans(ctx context.Context, d *dataset) ([]plan, error) {
	qdb, rec, err := recordingDB(d)
	if err != nil {
		return nil, err
	}
	defer qdb.Close()
	o := d.opts
	hot := o.TopicMessages(0)
	var out []plan
	explainSent := func(route, path string, stmts []stmtlog.Statement) error {
		for i, stmt := range stmts {
			conn, err := qdb.Bun().DB.Conn(ctx)
			if err != nil {
				return err
			}
			text, err := stmtlog.Plan(ctx, conn, stmt, "ANALYZE, BUFFERS")
			conn.Close()
			if err != nil {
				return err
			}
			sent := path
			if len(stmts) > 1 {
				sent = fmt.Sprintf("%s (statement %d of %d)", path, i+1, len(stmts))
			}
			out = append(out, plan{route: route, path: sent, sql: statementText(stmt), text: text})
		}
		return nil
	}
	paths := floorPaths(d)
	sent, err := sentStatements(ctx, qdb, rec, paths)
	if err != nil {
		return nil, err
	}
	for i, p := range paths {
		shown := "`GET " + p.path + "`"
		if p.shown != "" {
			shown = p.shown
		}
		if p.uncached {
			shown += " (response cache off)"
		}
		if err := explainSent(p.route, shown, sent[i]); err != nil {
			return out, err
		}
	}
	// What a busy service sends instead for the two point lookups: one
	// statement for the lookups that waited (db/coalesce.go).
	keys := make([]app.TopicSequence, 16)
	stamps := make([]model.Timestamp, len(keys))
	for i := range keys {
		seq := 1 + int64(i)*(hot/int64(len(keys)))
		keys[i] = app.TopicSequence{TopicID: model.EntityID(o.TopicID(0)), SequenceNumber: seq}
		stamps[i] = model.Timestamp(o.MessageTimestamp(0, seq))
	}
	waited := fmt.Sprintf("%d concurrent lookups, coalesced (db/coalesce.go),", len(keys))
	rec.Take()
	if _, err := qdb.MessagesBySequence(ctx, keys); err != nil {
		return out, err
	}
	if err := explainSent("by-sequence", waited, rec.Take()); err != nil {
		return out, err
	}
	if _, err := qdb.MessagesByTimestamp(ctx, stamps); err != nil {
		return out, err
	}
	if err := explainSent("by-timestamp", waited, rec.Take()); err != nil {
		return out, err
	}
	return out, nil
}

// bufferSample is what random lookups of a route touched in shared_buffers.
type bufferSample struct {
	route      string
	lookups    int
	hit, read  int64 // blocks in all
	withRead   int   // lookups that read at least one block from outside shared_buffers
	statements string
}

// sampleBuffers runs EXPLAIN (ANALYZE, BUFFERS) on n random by-sequence and
// list-gt-100 statements (the handlers' SQL with other values) and sums the
// shared buffers they hit and read: whether the working set of the random
// lookups fits in shared_buffers.
func sampleBuffers(ctx context.Context, d *dataset, n int) ([]bufferSample, error) {
	c, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	hot := d.opts.TopicMessages(0)
	topic := d.opts.TopicID(0)
	rng := rand.New(rand.NewPCG(uint64(d.opts.Seed), 11))
	queries := []struct {
		route string
		sql   func() string
	}{
		{"by-sequence", func() string {
			return fmt.Sprintf("SELECT %s FROM topic_message WHERE (topic_id = %d) AND (sequence_number = %d)",
				messageColumns, topic, 1+rng.Int64N(hot))
		}},
		{"list-gt-100", func() string {
			return fmt.Sprintf("SELECT %s FROM topic_message WHERE (topic_id = %d) AND (sequence_number > %d) ORDER BY sequence_number ASC LIMIT 100",
				messageColumns, topic, rng.Int64N(hot-100))
		}},
	}
	var out []bufferSample
	for _, q := range queries {
		b := bufferSample{route: q.route, lookups: n, statements: q.sql()}
		for range n {
			var plan []struct {
				Plan struct {
					Hit  int64 `json:"Shared Hit Blocks"`
					Read int64 `json:"Shared Read Blocks"`
				} `json:"Plan"`
			}
			var raw []byte
			if err := c.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+q.sql()).Scan(&raw); err != nil {
				return out, err
			}
			if err := json.Unmarshal(raw, &plan); err != nil || len(plan) == 0 {
				return out, fmt.Errorf("explain json: %v", err)
			}
			b.hit += plan[0].Plan.Hit
			b.read += plan[0].Plan.Read
			if plan[0].Plan.Read > 0 {
				b.withRead++
			}
		}
		out = append(out, b)
	}
	return out, nil
}

const messageColumns = "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, " +
	"chunk_num, chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"

// statementText is a statement as the report shows it: its text, then the
// values of its parameters.
func statementText(st stmtlog.Statement) string {
	if len(st.Args) == 0 {
		return st.SQL
	}
	return fmt.Sprintf("%s\n-- parameters $1…: %v", st.SQL, st.Args)
}
