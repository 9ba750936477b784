package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tools/stmtlog"
)

// The point lookups' floor (-scale-pair). A lookup by sequence number or
// by timestamp reads one or two partitions on v2, and alone it costs
// PostgreSQL about what v1's does. But the service coalesces concurrent
// lookups (db/coalesce.go): beyond a few in progress they share a batch,
// which on v1 is one statement over unnest(…) of the keys, and on v2 a
// statement per partition the keys are in (the keys of one topic land in
// different partitions), pipelined. Each of those statements pays its
// partition's lock, index and scan set-up, so a batch of k lookups costs v2
// k statements where it costs v1 one. No statement the service can send
// does better: one statement over the keys' partitions would be a new text
// for every combination of partitions, planned each time. The floor
// measures, for batches of k random keys of the hot topic, what each
// layout's service sends for them, read by pgbench alone: v1's and v2's
// own statements (recordingDB), their values written in, v2's several
// inside \startpipeline … \endpipeline as the service pipelines them.

// lookupBatches are the batch sizes of the lookup floors: a lookup alone
// (the service's own statement while few are in progress), and batches as
// the coalescer shares them under load.
var lookupBatches = []int{1, 4, 8}

// lookupScripts is how many scripts of fixed keys each lookup floor has
// (pgbench picks one at random for each transaction).
const lookupScripts = 8

// lookupRoutes are the lookups with a floor (scaleRouteNames' names).
var lookupRoutes = []string{"by-sequence", "by-timestamp"}

// lookupKeys are n sets of k distinct random sequence numbers of topic i of
// the plan, the same for the same plan, topic, k and n.
func lookupKeys(p *scalePlan, i, k, n int) [][]int64 {
	rng := rand.New(rand.NewPCG(uint64(p.spec.Seed), 0x6c6f6f6b7570^uint64(i)<<20^uint64(k)))
	t := p.topics[i]
	out := make([][]int64, n)
	for s := range out {
		seen := map[int64]bool{}
		for len(out[s]) < min(k, int(t.n)) {
			seq := 1 + rng.Int64N(t.n)
			if !seen[seq] {
				seen[seq] = true
				out[s] = append(out[s], seq)
			}
		}
	}
	return out
}

// lookupAsk is what the service asks of its query layer for keys (sequence
// numbers of topic i) of the route: the lookup alone for one key, the
// batch the coalescer hands on for several. It checks that every key was
// found.
func lookupAsk(ctx context.Context, p *scalePlan, i int, route string, keys []int64) func(*db.DB) error {
	topic := model.EntityID(p.topics[i].id)
	return func(q *db.DB) error {
		var found int
		switch {
		case route == "by-sequence" && len(keys) == 1:
			if _, err := q.MessageBySequence(ctx, topic, keys[0]); err != nil {
				return err
			}
			found = 1
		case route == "by-sequence":
			ks := make([]app.TopicSequence, len(keys))
			for j, seq := range keys {
				ks[j] = app.TopicSequence{TopicID: topic, SequenceNumber: seq}
			}
			m, err := q.MessagesBySequence(ctx, ks)
			if err != nil {
				return err
			}
			found = len(m)
		case route == "by-timestamp" && len(keys) == 1:
			if _, err := q.MessageByTimestamp(ctx, model.Timestamp(p.ts(i, keys[0]))); err != nil {
				return err
			}
			found = 1
		case route == "by-timestamp":
			stamps := make([]model.Timestamp, len(keys))
			for j, seq := range keys {
				stamps[j] = model.Timestamp(p.ts(i, seq))
			}
			m, err := q.MessagesByTimestamp(ctx, stamps)
			if err != nil {
				return err
			}
			found = len(m)
		default:
			return fmt.Errorf("no lookup %q", route)
		}
		if found != len(keys) {
			return fmt.Errorf("%s: %d of %d keys found", route, found, len(keys))
		}
		return nil
	}
}

// lookupScript is the script of a batch of k lookups from the statements
// the query layer sent for it, their values written in: one statement as
// it is, several inside \startpipeline … \endpipeline, as the query layer
// pipelines a batch's statements (db/pipeline.go). More statements than
// keys, or one planned for its values, is not what the floor measures.
func lookupScript(sent []stmtlog.Statement, k int) (string, error) {
	if len(sent) == 0 || len(sent) > k {
		return "", fmt.Errorf("%d statements sent for %d keys", len(sent), k)
	}
	for _, st := range sent {
		if st.Unprepared {
			return "", fmt.Errorf("a statement planned for its values: %s", shorten(st.SQL, 200))
		}
	}
	s, err := literalScript(sent)
	if err != nil {
		return "", err
	}
	if len(sent) > 1 {
		s = "\\startpipeline\n" + s + "\n\\endpipeline"
	}
	return s + "\n", nil
}

// lookupFloorScripts are the scripts of route's floor at k keys: on v1 and
// on v2 what each layout's query layer sends for lookupScripts batches of k
// random keys of the hot topic (record: the statements a query layer sent
// for an ask), and the mean statements of a v2 script.
func lookupFloorScripts(p *scalePlan, ask func(keys []int64) func(*db.DB) error,
	record1, record2 func(func(*db.DB) error) ([]stmtlog.Statement, error), k int) (s1, s2 []string, stmts float64, err error) {
	script := func(record func(func(*db.DB) error) ([]stmtlog.Statement, error), keys []int64) (string, int, error) {
		sent, err := record(ask(keys))
		if err != nil {
			return "", 0, err
		}
		s, err := lookupScript(sent, len(keys))
		return s, len(sent), err
	}
	for _, keys := range lookupKeys(p, 0, k, lookupScripts) {
		a, _, err := script(record1, keys)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("v1: %w", err)
		}
		b, n, err := script(record2, keys)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("v2: %w", err)
		}
		s1, s2, stmts = append(s1, a), append(s2, b), stmts+float64(n)
	}
	if len(s2) == 0 {
		return nil, nil, 0, fmt.Errorf("no keys")
	}
	return s1, s2, stmts / float64(len(s2)), nil
}

// recorder is the statements qdb sends for an ask, asked twice and the
// second time recorded in rec (the first learns what a service that has
// run a while knows: v2's topic map).
func recorder(qdb *db.DB, rec *stmtlog.Log) func(func(*db.DB) error) ([]stmtlog.Statement, error) {
	return func(ask func(*db.DB) error) ([]stmtlog.Statement, error) {
		if err := ask(qdb); err != nil {
			return nil, err
		}
		rec.Take()
		if err := ask(qdb); err != nil {
			return nil, err
		}
		return rec.Take(), nil
	}
}

// lookupFloors are the lookup floors' jobs, their scripts drawn; v1 and v2
// record what recordingDBs on the pair's data sets send (recorder).
func lookupFloors(ctx context.Context, p *scalePlan, v1, v2 func(func(*db.DB) error) ([]stmtlog.Statement, error)) []floorJob {
	var jobs []floorJob
	for _, route := range lookupRoutes {
		for _, k := range lookupBatches {
			lf := &layoutFloor{route: route, keys: k, what: fmt.Sprintf("the hot topic's messages of %d random keys", k)}
			s1, s2, stmts, err := lookupFloorScripts(p, func(keys []int64) func(*db.DB) error {
				return lookupAsk(ctx, p, 0, route, keys)
			}, v1, v2, k)
			if err != nil {
				lf.err = err.Error()
			} else {
				lf.statements, lf.example = stmts, s2[0]
			}
			jobs = append(jobs, floorJob{lf, s1, s2})
		}
	}
	return jobs
}

// lookupSection writes the lookup floors (floorSection): per route and k,
// each layout's tps and v2 ÷ v1 of the keys read a second (the same k on
// both: the ratio of their tps).
func (r *scaleReport) lookupSection(p func(string, ...any)) {
	var lfs []*layoutFloor
	for _, lf := range r.floors {
		if lf.keys > 0 {
			lfs = append(lfs, lf)
		}
	}
	if len(lfs) == 0 {
		return
	}
	p("The point lookups, the same way: k random keys of the hot topic a transaction (%d scripts of fixed keys each), on v1", lookupScripts)
	p("one statement (k = 1 its lookup, beyond it its batch over unnest), on v2 the statements v2's service sends for them, one")
	p("a partition the keys are in, pipelined. The service batches concurrent lookups under load (db/coalesce.go), so the")
	p("by-sequence and by-timestamp ceiling depends on the batch sizes it runs at: k = 1 bounds them under light load, the")
	p("larger batches under heavy load, where v2 pays a statement per partition for what v1 reads in one.")
	p("")
	p("| route | keys a transaction (k) | v2 statements a transaction | v1 tps (rounds) | v2 tps (rounds) | v1 keys/s | **keys/s v2 ÷ v1** |")
	p("|---|---:|---:|---|---|---:|---:|")
	for _, lf := range lfs {
		if lf.err != "" {
			p("| %s | %d | – | – | – | – | %s |", lf.route, lf.keys, shorten(lf.err, 200))
			continue
		}
		p("| %s | %d | %.1f | %s | %s | %.0f | **%.3f** |", lf.route, lf.keys, lf.statements, roundsTps(lf.v1), roundsTps(lf.v2),
			medianOf(tpsOf(lf.v1))*float64(lf.keys), lf.ratio())
	}
	p("")
}

// roundsTps is the rounds' tps, comma separated.
func roundsTps(fs []floor) string {
	var c []string
	for _, f := range fs {
		c = append(c, fmt.Sprintf("%.0f", f.tps))
	}
	return strings.Join(c, ", ")
}
