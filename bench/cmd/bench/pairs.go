package main

import (
	"fmt"
	"slices"
	"strings"
)

// GraphQL beside REST (issue 46): each GraphQL query is set beside the REST
// request that answers the same data, and their ratio is reported in every
// run: requests a second and the service's CPU per request from the paired
// rounds (the two routes back to back in each round, rounds.go), and in
// process (bench/handler's -benchmem benchmarks) allocations, ns/op and the
// goroutines a request starts.

// routePair is a GraphQL route and the REST route it is set beside.
type routePair struct {
	gql, rest string // buildRoutes' names
	// bench/handler's benchmarks of the two (without "Benchmark")
	gqlBench, restBench string
	// twin: REST answers the same data; otherwise the REST route is a
	// reference the GraphQL route is measured against, run after run
	twin bool
	// issue 46's targets: GraphQL ÷ REST requests a second at least
	// minRate, service CPU per request at most maxCPU (0: none)
	minRate, maxCPU float64
	// allocsBefore: the GraphQL benchmark's allocations a request before
	// issue 46 (allocsAt), whose half is the target (0: none)
	allocsBefore float64
	// citus: issue 46's target on Citus (make bench-citus): the GraphQL
	// route's Citus ÷ plain within citusMaxDiff of the REST route's
	citus bool
}

// allocsAt is the build the allocsBefore figures were measured on.
const allocsAt = "d099a63"

// routePairs are the pairs every run reports, in the report's order.
var routePairs = []routePair{
	// 100 messages after a sequence number: REST's fields, chunkInfo and
	// pageInfo (REST's links.next)
	{gql: "gql-list-gt-100", rest: "list-gt-100", gqlBench: "GraphQLListGt100", restBench: "ListGt100", twin: true,
		minRate: 0.7, maxCPU: 1.5, allocsBefore: 9247, citus: true},
	// the same page nested under its topic
	{gql: "gql-topic-page", rest: "list-gt-100", gqlBench: "GraphQLTopicPage", restBench: "ListGt100", twin: true, minRate: 0.6},
	// one message by sequence number
	{gql: "gql-message", rest: "by-sequence", gqlBench: "GraphQLMessage", restBench: "BySequence", twin: true, minRate: 0.95},
	// 100 schedules after an id: REST uncached, as GraphQL has no cache
	{gql: "gql-schedules", rest: "schedules-gt-100", gqlBench: "GraphQLSchedules", restBench: "SchedulesGt100", twin: true},
	// no REST twin: against REST by sequence, as its target is
	{gql: "gql-activity", rest: "by-sequence", gqlBench: "GraphQLActivity", restBench: "BySequence"},
}

// pairRatios are each round's GraphQL ÷ REST, of the rates and of the
// service CPU per request, over the rounds in which both were measured
// (gql[i] and rest[i] of the same round).
func pairRatios(gql, rest []measurement) (rps, cpu []float64) {
	for i := range min(len(gql), len(rest)) {
		if rest[i].rps > 0 {
			rps = append(rps, gql[i].rps/rest[i].rps)
		}
		if rest[i].cpuPer1k > 0 && gql[i].cpuPer1k > 0 {
			cpu = append(cpu, gql[i].cpuPer1k/rest[i].cpuPer1k)
		}
	}
	return rps, cpu
}

// medianMid is the median of v, the mean of the middle two when even (as
// the ratio targets judge the rounds); 0 when empty.
func medianMid(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// pairFigures are a pair's figures in one run.
type pairFigures struct {
	pair              routePair
	rounds            int // the rounds both were measured in; 0: the single pass
	restRPS, gqlRPS   float64
	rpsRatio          float64
	restCPU, gqlCPU   float64 // ms a request
	cpuRatio          float64 // 0: not measured
	restProf, gqlProf *profileResult
}

// pairFigures are the pairs' figures of the run: from the paired rounds
// when both routes ran in them, else from the single pass at the first
// connection count; the in-process figures from the profiles.
func (r *report) pairFigures() []pairFigures {
	var out []pairFigures
	c0 := r.flags.conns[0]
	for _, p := range routePairs {
		pf := pairFigures{pair: p, gqlProf: r.profile(p.gqlBench), restProf: r.profile(p.restBench)}
		var gs, rs []measurement
		for _, rd := range r.rounds {
			if g, rr := rd.row(p.gql), rd.row(p.rest); g != nil && rr != nil {
				gs, rs = append(gs, *g), append(rs, *rr)
			}
		}
		pf.rounds = len(gs)
		if len(gs) == 0 {
			if g, rr := r.row(p.gql, c0, r.rows), r.row(p.rest, c0, r.rows); g != nil && rr != nil {
				gs, rs = []measurement{*g}, []measurement{*rr}
			}
		}
		if len(gs) > 0 {
			rps, cpu := pairRatios(gs, rs)
			pf.rpsRatio, pf.cpuRatio = medianMid(rps), medianMid(cpu)
			var a, b, c, d []float64
			for i := range gs {
				a, b, c, d = append(a, gs[i].rps), append(b, rs[i].rps), append(c, gs[i].cpuPer1k), append(d, rs[i].cpuPer1k)
			}
			pf.gqlRPS, pf.restRPS, pf.gqlCPU, pf.restCPU = medianMid(a), medianMid(b), medianMid(c), medianMid(d)
		}
		if len(gs) == 0 && pf.gqlProf == nil && pf.restProf == nil {
			continue
		}
		out = append(out, pf)
	}
	return out
}

// profile is the in-process result of bench/handler's benchmark name
// (without "Benchmark"), if it ran.
func (r *report) profile(name string) *profileResult {
	for i := range r.profiles {
		if r.profiles[i].bench == "Benchmark"+name {
			return &r.profiles[i]
		}
	}
	return nil
}

// pairsMarkdown is the table of the pairs, and what it is measured on.
func (r *report) pairsMarkdown(p func(string, ...any)) {
	figs := r.pairFigures()
	if len(figs) == 0 {
		return
	}
	p("")
	p("### GraphQL beside REST (the same data)")
	p("")
	rounds := 0
	for _, f := range figs {
		rounds = max(rounds, f.rounds)
	}
	src := "the single pass at %d connections (no paired rounds ran)"
	args := []any{r.flags.conns[0]}
	if rounds > 0 {
		src = "the %d paired rounds at %d connections: both routes of a pair back to back in each round, the rates and CPU the rounds' medians, **GraphQL ÷ REST** the median of the rounds' ratios"
		args = []any{rounds, r.flags.conns[0]}
	}
	p("Requests/s and the service's CPU per request from "+src+"; allocations, ns/op and goroutines started per request in"+
		" process (bench/handler's `-benchmem` benchmarks, 64 requests in flight, below). A pair without a REST twin is set"+
		" beside a REST route only as a reference, so that \"no slower than before\" can be read run after run.", args...)
	p("")
	p("| GraphQL ↔ REST | REST req/s | GraphQL req/s | **GraphQL ÷ REST** | CPU ms/req REST | CPU ms/req GraphQL | **CPU GraphQL ÷ REST** | allocs/req REST | allocs/req GraphQL | **allocs ÷** | ns/op REST | ns/op GraphQL | **ns/op ÷** | goroutines started/req REST / GraphQL | targets (issue 46) |")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, f := range figs {
		cells := f.cells()
		if f.rounds == 0 && rounds > 0 {
			cells[0] += " (single pass: not in the rounds)"
		}
		p("| %s |", strings.Join(cells, " | "))
	}
}

// cells are the pair's row of pairsMarkdown.
func (f pairFigures) cells() []string {
	num := func(v float64, format string) string {
		if v == 0 {
			return "–"
		}
		return fmt.Sprintf(format, v)
	}
	ratio := func(a, b float64) string {
		if a == 0 || b == 0 {
			return "–"
		}
		return fmt.Sprintf("**%.3f**", a/b)
	}
	name := fmt.Sprintf("`%s` ↔ `%s`", f.pair.gql, f.pair.rest)
	if !f.pair.twin {
		name += " (no REST twin: a reference)"
	}
	cells := []string{name, num(f.restRPS, "%.0f"), num(f.gqlRPS, "%.0f"), num(f.rpsRatio, "**%.3f**"),
		num(f.restCPU, "%.3f"), num(f.gqlCPU, "%.3f"), num(f.cpuRatio, "**%.3f**")}
	for _, unit := range []string{"allocs/op", "ns/op"} {
		rv, _ := f.restProf.metric(unit)
		gv, _ := f.gqlProf.metric(unit)
		cells = append(cells, num(rv, "%.0f"), num(gv, "%.0f"), ratio(gv, rv))
	}
	rg, rok := f.restProf.metric("goroutines/op")
	gg, gok := f.gqlProf.metric("goroutines/op")
	if rok || gok {
		cells = append(cells, fmt.Sprintf("%.2f / %.2f", rg, gg))
	} else {
		cells = append(cells, "–")
	}
	return append(cells, strings.Join(f.verdicts(), "; "))
}

// verdicts are the pair's issue 46 targets, each judged.
func (f pairFigures) verdicts() []string {
	var out []string
	if f.pair.minRate > 0 {
		v := "not measured"
		if f.rpsRatio > 0 {
			v = yes(f.rpsRatio >= f.pair.minRate)
		}
		out = append(out, fmt.Sprintf("req/s ÷ ≥ %.2f: %s", f.pair.minRate, v))
	}
	if f.pair.maxCPU > 0 {
		v := "not measured"
		if f.cpuRatio > 0 {
			v = yes(f.cpuRatio <= f.pair.maxCPU)
		}
		out = append(out, fmt.Sprintf("CPU ÷ ≤ %.1f: %s", f.pair.maxCPU, v))
	}
	if f.pair.allocsBefore > 0 {
		v := "not measured"
		if a, ok := f.gqlProf.metric("allocs/op"); ok {
			v = yes(a <= f.pair.allocsBefore/2)
		}
		out = append(out, fmt.Sprintf("allocs ≤ %.0f (half of %.0f at %s): %s", f.pair.allocsBefore/2, f.pair.allocsBefore, allocsAt, v))
	}
	if len(out) == 0 {
		out = append(out, "no slower than before (`bench -ab`)")
	}
	return out
}

// inProcessMarkdown is every profiled benchmark's figures.
func (r *report) inProcessMarkdown(p func(string, ...any)) {
	if len(r.profiles) == 0 {
		return
	}
	p("")
	p("In process, each benchmark at 64 requests in flight (`b.SetParallelism(32)` on 2 cores): goroutines started a request is"+
		" the runtime's count of goroutines created over the run ÷ requests (a list that starts a goroutine per element"+
		" shows about one per element); the peaks are samples every 2 ms (bench/handler's samplePeaks). -benchtime %s.",
		r.flags.profileTime)
	p("")
	p("| benchmark | ns/op | B/op | allocs/op | goroutines started/op | peak goroutines | peak heap MiB |")
	p("|---|---:|---:|---:|---:|---:|---:|")
	for i := range r.profiles {
		pr := &r.profiles[i]
		cell := func(unit, format string) string {
			if v, ok := pr.metric(unit); ok {
				return fmt.Sprintf(format, v)
			}
			return "–"
		}
		p("| %s | %s | %s | %s | %s | %s | %s |", strings.TrimPrefix(pr.bench, "Benchmark"), cell("ns/op", "%.0f"),
			cell("B/op", "%.0f"), cell("allocs/op", "%.0f"), cell("goroutines/op", "%.2f"), cell("peak-goroutines", "%.0f"),
			cell("peak-heap-MiB", "%.1f"))
	}
}
