package main

import (
	"context"
	"fmt"
	"log"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
)

// The layout's floor (-scale-pair): how fast PostgreSQL itself can read a
// route's rows from each layout, whatever statement the service sends.
// A sparse topic's first page or the hot topic's whole-history activity
// reads from one index on v1 and from every partition its rows are in on
// v2; PostgreSQL pays for each partition a statement touches (its lock,
// its index opened, its scan set up), so the ratio between the two can be
// bounded from below by no choice of statement. The floor is measured
// with the cheapest statement there is for those rows: their bounds
// written in as constants, so that the plan, prepared once per connection
// and then reused, holds exactly the partitions the rows are in (nothing
// pruned at execution, nothing planned per execution) — a statement the
// service could not send, since it would need a plan for every page, but
// one that no statement the service could send beats. v1's are the
// statements v1's query layer sends for the same rows (recordingDB), their
// values written in. The point lookups in batches have a floor of their
// own (scale_floor_lookups.go).

// floorTopics is how many topics the page floors draw from (pgbench picks
// one of their scripts at random for each transaction).
const floorTopics = 16

// layoutFloor is one route's floor on both layouts, round by round.
type layoutFloor struct {
	route      string // scaleRouteNames' name
	what       string
	example    string  // one of v2's scripts
	partitions float64 // mean partitions a v2 script reads
	keys       int     // the lookups' (scale_floor_lookups.go): keys a transaction; 0 for the routes' floors
	statements float64 // the lookups': mean statements of a v2 script
	v1, v2     []floor
	err        string
}

// floorJob is a floor and its scripts on each layout.
type floorJob struct {
	lf     *layoutFloor
	s1, s2 []string
}

// name is the floor's in the log and pgbench's scripts: the route's, and
// a lookup's batch size.
func (lf *layoutFloor) name() string {
	if lf.keys > 0 {
		return fmt.Sprintf("%s-k%d", lf.route, lf.keys)
	}
	return lf.route
}

// ratio is the median of the rounds' v2 ÷ v1.
func (lf *layoutFloor) ratio() float64 {
	var rs []float64
	for i := range min(len(lf.v1), len(lf.v2)) {
		rs = append(rs, lf.v2[i].tps/max(lf.v1[i].tps, 1e-9))
	}
	return medianOf(rs)
}

// medianOf is the median of v (the upper one of an even count), 0 for none.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// pairFloors measures the floors of the routes whose v2 reads spread over
// many partitions (list-25, the GraphQL page, activity) and of the point
// lookups in batches (lookupFloors) on the pair's data sets, in
// alternating rounds.
func pairFloors(ctx context.Context, p *scalePlan, v1, v2 *dataset, conns, rounds int, dur time.Duration) []*layoutFloor {
	conn, err := pgx.Connect(ctx, v2.url)
	if err != nil {
		return []*layoutFloor{{route: "all", err: err.Error()}}
	}
	defer conn.Close(ctx)
	qdb, rec, err := recordingDB(v1)
	if err != nil {
		return []*layoutFloor{{route: "all", err: err.Error()}}
	}
	defer qdb.Close()
	record1 := recorder(qdb, rec)
	// sent is the v1 script of what ask sends: v1's own statements
	sent := func(ask func(*db.DB) error) (string, error) {
		st, err := record1(ask)
		if err != nil {
			return "", err
		}
		s, err := literalScript(st)
		return s + "\n", err
	}
	var jobs []floorJob
	for _, n := range []int64{25, 100} {
		lf := &layoutFloor{route: "list-25", what: "a random topic's first 25 messages"}
		if n == 100 {
			lf.route, lf.what = "gql-page", "a random topic's first 100 messages"
		}
		s1, s2, parts, err := pageFloorScripts(ctx, conn, sent, p, n)
		if err != nil {
			lf.err = err.Error()
		} else {
			lf.partitions, lf.example = parts, s2[0]
		}
		jobs = append(jobs, floorJob{lf, s1, s2})
	}
	lf := &layoutFloor{route: "gql-activity", what: "the first sequence number at or after each of the hot topic's 96 boundaries"}
	s1, s2, parts, err := activityFloorScripts(ctx, conn, sent, p)
	if err != nil {
		lf.err = err.Error()
	} else {
		lf.partitions, lf.example = parts, s2[0]
	}
	jobs = append(jobs, floorJob{lf, s1, s2})
	// the lookups: what each layout's query layer sends, v2's too
	if qdb2, rec2, err := recordingDB(v2); err != nil {
		jobs = append(jobs, floorJob{lf: &layoutFloor{route: "lookups", keys: 1, err: err.Error()}})
	} else {
		defer qdb2.Close()
		jobs = append(jobs, lookupFloors(ctx, p, record1, recorder(qdb2, rec2))...)
	}

	for r := 0; r < rounds; r++ {
		for _, j := range jobs {
			if j.lf.err != "" {
				continue
			}
			for _, side := range []struct {
				d       *dataset
				scripts []string
				out     *[]floor
			}{{v1, j.s1, &j.lf.v1}, {v2, j.s2, &j.lf.v2}} {
				fl, err := runPgbench(ctx, side.d, conns, "prepared", dur, nil, j.lf.name()+".sql", side.scripts)
				if err != nil {
					j.lf.err = err.Error()
					break
				}
				log.Printf("floor %-15s %s: %.0f tps", j.lf.name(), side.d.name, fl.tps)
				*side.out = append(*side.out, fl)
			}
		}
	}
	out := make([]*layoutFloor, len(jobs))
	for i, j := range jobs {
		out[i] = j.lf
	}
	return out
}

// pageFloorScripts are, for floorTopics topics spread over the plan's, the
// topic's first n messages: on v1 as v1's query layer reads them, on v2
// bounded by their first and last timestamps.
func pageFloorScripts(ctx context.Context, conn *pgx.Conn, sent func(func(*db.DB) error) (string, error), p *scalePlan, n int64) (s1, s2 []string, parts float64, err error) {
	step := max(1, len(p.topics)/floorTopics)
	for i := step / 2; i < len(p.topics) && len(s1) < floorTopics; i += step {
		t := p.topics[i]
		last := min(n, t.n)
		lo, hi := p.ts(i, 1), p.ts(i, last)
		v1, err := sent(func(q *db.DB) error {
			_, err := q.MessagesOfTopic(ctx, app.MessageFilter{TopicID: model.EntityID(t.id), Limit: int(n)})
			return err
		})
		if err != nil {
			return nil, nil, 0, err
		}
		s1 = append(s1, v1)
		s2 = append(s2, fmt.Sprintf("SELECT %s FROM topic_message WHERE topic_id = %d AND consensus_timestamp >= %d AND consensus_timestamp <= %d ORDER BY consensus_timestamp LIMIT %d;\n",
			messageColumns, t.id, lo, hi, n))
		var k int64
		if err := conn.QueryRow(ctx, "SELECT count(DISTINCT tableoid) FROM topic_message WHERE topic_id = $1 AND consensus_timestamp BETWEEN $2 AND $3",
			t.id, lo, hi).Scan(&k); err != nil {
			return nil, nil, 0, err
		}
		parts += float64(k)
	}
	if len(s1) == 0 {
		return nil, nil, 0, fmt.Errorf("no topics")
	}
	return s1, s2, parts / float64(len(s1)), nil
}

// activityFloorScripts are the hot topic's whole-history activity: on v1
// as v1's query layer asks it (one probe node rescanned for each boundary,
// which on the flat table costs less than a probe node per boundary), on v2
// as one probe per boundary into the partition that holds the answer, named.
func activityFloorScripts(ctx context.Context, conn *pgx.Conn, sent func(func(*db.DB) error) (string, error), p *scalePlan) (s1, s2 []string, parts float64, err error) {
	hot := p.topics[0]
	bounds := model.Boundaries(model.Timestamp(p.ts(0, 1)), model.Timestamp(p.ts(0, hot.n)+1), activityBuckets)
	var probes []string
	seen := map[string]bool{}
	for _, b := range bounds[:len(bounds)-1] {
		var part string
		if err := conn.QueryRow(ctx, "SELECT tableoid::regclass::text FROM topic_message WHERE topic_id = $1 AND consensus_timestamp >= $2 ORDER BY consensus_timestamp LIMIT 1",
			hot.id, int64(b)).Scan(&part); err != nil {
			return nil, nil, 0, fmt.Errorf("the partition of boundary %d: %w", int64(b), err)
		}
		seen[part] = true
		probes = append(probes, fmt.Sprintf("(SELECT sequence_number FROM %s WHERE topic_id = %d AND consensus_timestamp >= %d ORDER BY consensus_timestamp LIMIT 1)",
			part, hot.id, int64(b)))
	}
	v1, err := sent(func(q *db.DB) error {
		_, err := q.Activity(ctx, model.EntityID(hot.id), bounds)
		return err
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return []string{v1}, []string{"SELECT ARRAY[" + strings.Join(probes, ", ") + "];\n"}, float64(len(seen)), nil
}

// floorSection writes the floors and what they bound. A v2 request costs
// at least a v1 request (c1: the CPU the service, the load tool and
// PostgreSQL spent on one in the rounds, measured, so that time waiting on
// the disk is not counted) plus what reading its rows from the partitions
// costs PostgreSQL over reading them from the flat table. pgbench keeps
// the cores busy, so a transaction takes cores ÷ tps of CPU, and Δ = cores
// ÷ floor tps on v2 − cores ÷ tps on v1 (pgbench's own share is the same on
// both and drops out). With the cores busy serving the route, its v2 ÷ v1
// is then at most c1 ÷ (c1 + Δ). Generous: the floor reads a few topics,
// whose pages stay in shared buffers.
func (r *scaleReport) floorSection(p func(string, ...any)) {
	if len(r.floors) == 0 {
		return
	}
	var base map[string]measurement
	for _, g := range r.groups {
		if strings.HasPrefix(g.base, "v1 ") {
			base = g.rows[g.base]
		}
	}
	p("### The layout's floor: PostgreSQL alone, the cheapest statement for the rows")
	p("")
	p("Each route's rows read by pgbench alone (-M prepared, %d clients, the services stopped, %d alternating rounds): on v1 from", r.f.pool, sf.rounds)
	p("the flat table, on v2 by the cheapest statement there is for them (their partitions named by constants); the ceiling is")
	p("the most the route's v2 ÷ v1 could be were the service's own work the same on both layouts (how: the whole report).")
	p("")
	p("| route | rows read | v2 partitions read | v1 tps (rounds) | v2 floor tps (rounds) | **floor v2 ÷ v1** | ceiling of the route's v2 ÷ v1 |")
	p("|---|---|---:|---|---|---:|---:|")
	for _, lf := range r.floors {
		if lf.keys > 0 {
			continue // lookupSection's
		}
		if lf.err != "" {
			p("| %s | %s | – | – | – | – | %s |", lf.route, lf.what, shorten(lf.err, 200))
			continue
		}
		ceiling := "–"
		if m, ok := base[lf.route]; ok {
			c1 := (m.cpuPer1k + m.pgCPUPer1k + m.loadCPUPer1k) / 1000
			if c, ok := ceilingOf(float64(runtime.NumCPU()), c1, medianOf(tpsOf(lf.v1)), medianOf(tpsOf(lf.v2))); ok {
				ceiling = fmt.Sprintf("%.2f", c)
			}
		}
		p("| %s | %s | %.1f | %s | %s | **%.3f** | %s |", lf.route, lf.what, lf.partitions, roundsTps(lf.v1), roundsTps(lf.v2), lf.ratio(), ceiling)
	}
	p("")
	r.lookupSection(p)
}

// floorDetails says how the floor and its ceiling are measured, with a
// script of each route: in the whole report, after the details' heading.
func (r *scaleReport) floorDetails(p func(string, ...any)) {
	if len(r.floors) == 0 {
		return
	}
	p("### The layout's floor, how")
	p("")
	p("For the routes whose v2 rows spread over many partitions, each route's rows read by pgbench alone (-M prepared, %d clients,", r.f.pool)
	p("the services stopped), in %d alternating rounds: on v1 from the flat table, on v2 by the cheapest statement there is for", sf.rounds)
	p("them — their bounds written in as constants, so that the plan prepared once per connection holds exactly the partitions")
	p("the rows are in (no pruning at execution, no planning per execution; activity: one probe per boundary into the partition")
	p("named; v1's is the statement v1's service sends). No statement the service can send reads these rows from v2 for less:")
	p("it cannot keep a plan for every page. The ceiling is the most the route's v2 ÷ v1 could be: c1 ÷ (c1 + Δ), c1 the CPU")
	p("a v1 request took in the rounds above (service, load tool and PostgreSQL, measured) and Δ what reading its rows from the")
	p("partitions adds (%d cores ÷ v2's floor tps − %d cores ÷ v1's tps), were the service's own work the same on both layouts.", runtime.NumCPU(), runtime.NumCPU())
	p("Generous: the floor reads %d topics, whose pages stay in shared buffers; the route's random topics do not.", floorTopics)
	p("")
	p("The point lookups' floor: %d scripts of k fixed random keys of the hot topic for each k, a batch of k a transaction;", lookupScripts)
	p("each layout's script the statements its query layer (recordingDB, asked once before to learn v2's topic map) sends")
	p("for the batch, their values written in: for k = 1 the lookup alone (the service's while few are in progress), beyond it")
	p("the batch the coalescer hands on (v1: one statement over unnest; v2: a statement per partition the keys are in, within")
	p("its bounds as constants, several sent inside \\startpipeline … \\endpipeline as the service pipelines them). Every key")
	p("is found on both. No statement the service can send reads a batch from v2 for less: one over the keys' partitions")
	p("would be a new text for every combination of partitions, planned at every execution.")
	p("")
	for _, lf := range r.floors {
		if lf.example != "" && (lf.keys == 0 || lf.keys == slices.Max(lookupBatches)) {
			p("%s, one of v2's floor scripts:", lf.name())
			p("")
			p("```sql")
			p("%s", shorten(strings.TrimSpace(lf.example), 1200))
			p("```")
			p("")
		}
	}
}

func tpsOf(fs []floor) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = f.tps
	}
	return out
}

// ceilingOf is the most a route's v2 ÷ v1 can be (floorSection): c1 ÷
// (c1 + Δ), c1 the CPU seconds of a v1 request and Δ = cores ÷ tps2 −
// cores ÷ tps1 (what reading its rows from v2's partitions adds), Δ taken
// as 0 where v2's floor is the faster. ok is false without figures.
func ceilingOf(cores, c1, tps1, tps2 float64) (float64, bool) {
	if cores <= 0 || c1 <= 0 || tps1 <= 0 || tps2 <= 0 {
		return 0, false
	}
	delta := max(cores/tps2-cores/tps1, 0)
	return c1 / (c1 + delta), true
}
