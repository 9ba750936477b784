package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"
)

// The throughput targets are ratios: to the pgbench floor, or to the
// by-sequence rate. On a shared 2-core machine one pass measures the floor
// and the routes minutes apart, and whatever else runs meanwhile moves one
// side and not the other (bench/results/decisions-2026-11.md has the passes that
// showed it). So the ratios are also measured in paired rounds — the floor
// and the target routes back to back, several times — and judged by the
// median of the rounds' ratios, the way the scaling check pairs its data
// sets. Every round is printed; so is the single pass.

// targetRoutes are the routes a ratio target or a pair of routePairs
// names, in the order of a round (roundOrder): each GraphQL route next to
// the REST route it is set beside (pairs.go), so that the two see the same
// machine.
var targetRoutes = []string{"by-sequence", "gql-message", "by-timestamp", "list-25", "list-gt-100",
	"gql-list-gt-100", "gql-topic-page", "topic", "schedule", "gql-activity", "schedules-gt-100", "gql-schedules"}

// shortRound are the target routes whose phases in a round last
// -short-duration rather than -target-duration: the ones added for the
// topic, schedule and activity targets and the schedules pair, kept short
// so that the suite stays within its minutes (at their rates a 2 s window
// still counts thousands of requests; the verdict is the median of the
// rounds, each printed).
var shortRound = map[string]bool{"topic": true, "schedule": true, "gql-activity": true,
	"schedules-gt-100": true, "gql-schedules": true}

// roundOrder is the order of round i's routes (from 0): targetRoutes, and
// every other round the other way round, so that neither route of a pair
// is always the one measured first.
func roundOrder(i int) []string {
	names := slices.Clone(targetRoutes)
	if i%2 == 1 {
		slices.Reverse(names)
	}
	return names
}

// shortRoundNames are the routes of shortRound, in a round's order, as the
// reports name them.
func shortRoundNames() string {
	var names []string
	for _, n := range targetRoutes {
		if shortRound[n] {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// roundColumns are a round's phases after the floor, as the tables show them.
var roundColumns = append([]string{aloneRoute}, targetRoutes...)

// round is one pgbench floor and the target routes right after it.
type round struct {
	floor floor
	rows  []measurement
}

func (rd round) row(name string) *measurement {
	for i := range rd.rows {
		if rd.rows[i].route.name == name {
			return &rd.rows[i]
		}
	}
	return nil
}

// pairedRounds runs f.targetRounds rounds at the first connection count,
// each route on the service svcFor gives it; without -floor, the rounds
// have no floor (its targets are then not judged; the pairs are).
// alone, when not nil, is the HTTP alone server, measured after the floor
// with aloneR.
func pairedRounds(ctx context.Context, f flags, d *dataset, svcFor func(route) (*service, error), routes []route, graphql bool,
	mon *pgMonitor, alone *service, aloneR route) ([]round, error) {
	rf := f
	rf.duration = f.targetDuration
	conns := f.conns[0]
	var out []round
	for i := range f.targetRounds {
		var rd round
		if f.floor {
			fl, err := pgbenchFloor(ctx, d, conns, "prepared", f.targetDuration, mon)
			if err != nil {
				return out, fmt.Errorf("round %d: pgbench: %w", i+1, err)
			}
			log.Printf("round %d: pgbench -c%d: %.0f tps", i+1, conns, fl.tps)
			rd.floor = fl
		}
		if alone != nil {
			m, err := measure(ctx, alone, aloneR, conns, rf, mon)
			if err != nil {
				return out, fmt.Errorf("round %d: %s: %w", i+1, aloneR.name, err)
			}
			rd.rows = append(rd.rows, m)
		}
		for _, name := range roundOrder(i) {
			j := slices.IndexFunc(routes, func(r route) bool { return r.name == name })
			if j < 0 || !f.wants(name) || (routes[j].graphql && !graphql) {
				continue
			}
			pf := rf
			if shortRound[name] {
				pf.duration = f.shortDuration
			}
			svc, err := svcFor(routes[j])
			if err != nil {
				return out, fmt.Errorf("round %d: %s: %w", i+1, name, err)
			}
			m, err := measure(ctx, svc, routes[j], conns, pf, mon)
			if err != nil {
				return out, fmt.Errorf("round %d: %s: %w", i+1, name, err)
			}
			rd.rows = append(rd.rows, m)
		}
		out = append(out, rd)
	}
	return out, nil
}

// ratioTarget is one of the benchmark's targets on the routes' rates and
// latencies, judged on the single pass (as one round) and on the rounds.
type ratioTarget struct {
	title string
	info  bool                                       // a reference figure with no target of its own
	min   float64                                    // a rate target: num / den must reach it
	rate  func(rd round) (num, den float64, ok bool) // its rates in a round
	p99   func(rd round) (time.Duration, bool)       // or a latency target: at most p99Max
}

// p99Max is the latency target at 32 connections; listMin the list
// routes' share of the by-sequence rate; lookupMin that of the topic and
// schedule lookups and of the activity query.
const (
	p99Max    = 5 * time.Millisecond
	listMin   = 0.35
	lookupMin = 0.5
)

func rateOf(name, to string) func(rd round) (num, den float64, ok bool) {
	return func(rd round) (float64, float64, bool) {
		m := rd.row(name)
		if m == nil {
			return 0, 0, false
		}
		if to == "" {
			return m.rps, rd.floor.tps, rd.floor.tps > 0
		}
		d := rd.row(to)
		if d == nil || d.rps == 0 {
			return 0, 0, false
		}
		return m.rps, d.rps, true
	}
}

func p99Of(name string) func(rd round) (time.Duration, bool) {
	return func(rd round) (time.Duration, bool) {
		if m := rd.row(name); m != nil {
			return m.p99, true
		}
		return 0, false
	}
}

var ratioTargets = []ratioTarget{
	{title: "REST by sequence ≥ 0.5 × floor", min: 0.5, rate: rateOf("by-sequence", "")},
	{title: "REST by sequence p99 ≤ 5 ms", p99: p99Of("by-sequence")},
	{title: "REST by timestamp ≥ 0.5 × floor", min: 0.5, rate: rateOf("by-timestamp", "")},
	{title: "REST by timestamp p99 ≤ 5 ms", p99: p99Of("by-timestamp")},
	{title: "GraphQL topicMessage ≥ 0.8 × REST by-sequence", min: 0.8, rate: rateOf("gql-message", "by-sequence")},
	{title: "REST list limit=25 ≥ 0.35 × by-sequence", min: listMin, rate: rateOf("list-25", "by-sequence")},
	{title: "REST list seq gt, limit=100 ≥ 0.35 × by-sequence", min: listMin, rate: rateOf("list-gt-100", "by-sequence")},
	{title: "GraphQL list seq gt, first 100 ≥ 0.7 × REST list seq gt, limit=100", min: 0.7,
		rate: rateOf("gql-list-gt-100", "list-gt-100")},
	{title: "REST topic details ≥ 0.5 × by-sequence", min: lookupMin, rate: rateOf("topic", "by-sequence")},
	{title: "REST schedule by id ≥ 0.5 × by-sequence", min: lookupMin, rate: rateOf("schedule", "by-sequence")},
	{title: "GraphQL topic activity (96 buckets, the hot topic's history) ≥ 0.5 × by-sequence", min: lookupMin,
		rate: rateOf("gql-activity", "by-sequence")},
	{title: "(reference, no target) HTTP alone p99: no database, no handler", info: true, p99: p99Of(aloneRoute)},
	{title: "(reference, no target) REST by sequence ÷ HTTP alone", info: true, rate: rateOf("by-sequence", aloneRoute)},
}

// figure is the target's figure in one round (a ratio, or a p99 in
// nanoseconds) and its text: "num / den = ratio" when long, else the ratio.
func (t ratioTarget) figure(rd round, long bool) (v float64, text string, ok bool) {
	if t.p99 != nil {
		d, ok := t.p99(rd)
		return float64(d), t.text(float64(d)), ok
	}
	num, den, ok := t.rate(rd)
	if !ok {
		return 0, "", false
	}
	if long {
		return num / den, fmt.Sprintf("%.0f / %.0f = %s", num, den, t.text(num/den)), true
	}
	return num / den, t.text(num / den), true
}

// text is figure v as the tables show it: a p99 in ms, or a ratio with
// three decimals, so that 0.4982 does not read as a 0.50 that failed its
// target of 0.5.
func (t ratioTarget) text(v float64) string {
	if t.p99 != nil {
		return ms(time.Duration(v)) + " ms"
	}
	return fmt.Sprintf("%.3f", v)
}

// meets reports whether figure v meets the target.
func (t ratioTarget) meets(v float64) bool {
	if t.p99 != nil {
		return v <= float64(p99Max)
	}
	return v >= t.min
}

// verdict is the last cell of a target's row.
func (t ratioTarget) verdict(met bool) string {
	if t.info {
		return "reference"
	}
	return yes(met)
}

// judge is a target's verdict on the rounds: the median of the rounds'
// figures, and each round's.
func (t ratioTarget) judge(rounds []round) (median string, each []string, met, ok bool) {
	var vals []float64
	for _, rd := range rounds {
		if v, text, ok := t.figure(rd, false); ok {
			vals = append(vals, v)
			each = append(each, text)
		}
	}
	if len(vals) == 0 {
		return "", nil, false, false
	}
	mid := medianMid(vals)
	return t.text(mid), each, t.meets(mid), true
}

// roundsMarkdown is the report's section on the rounds.
func (r *report) roundsMarkdown(p func(string, ...any)) {
	if len(r.rounds) == 0 {
		return
	}
	c0 := r.flags.conns[0]
	p("")
	p("### Targets in paired rounds (%d rounds at %d connections, %s measured per phase, %s for %s)",
		len(r.rounds), c0, r.flags.targetDuration, r.flags.shortDuration, shortRoundNames())
	p("")
	if r.flags.floor {
		p("Each round is the pgbench floor and then the target routes, back to back, on the service of the table")
	} else {
		p("Each round is the target routes (no pgbench floor: `-floor=false`), back to back, on the service of the table")
	}
	p("above; a target's verdict is the median of the rounds' ratios (or p99s).")
	p("")
	head := []string{"round", "floor tps"}
	for _, name := range roundColumns {
		if m := r.rounds[0].row(name); m != nil {
			head = append(head, m.route.title+" req/s", "p99 ms")
		}
	}
	p("| %s |", strings.Join(head, " | "))
	p("|%s", strings.Repeat("---:|", len(head)))
	for i, rd := range r.rounds {
		fl := "–"
		if rd.floor.tps > 0 {
			fl = fmt.Sprintf("%.0f", rd.floor.tps)
		}
		cells := []string{fmt.Sprint(i + 1), fl}
		for _, name := range roundColumns {
			if r.rounds[0].row(name) == nil {
				continue
			}
			if m := rd.row(name); m != nil {
				cells = append(cells, fmt.Sprintf("%.0f", m.rps), ms(m.p99))
			} else {
				cells = append(cells, "–", "–")
			}
		}
		p("| %s |", strings.Join(cells, " | "))
	}
	p("")
	p("| target | median of the rounds | each round | |")
	p("|---|---:|---|---|")
	for _, t := range ratioTargets {
		if median, each, met, ok := t.judge(r.rounds); ok {
			p("| %s | %s | %s | %s |", t.title, median, strings.Join(each, ", "), t.verdict(met))
		}
	}
}
