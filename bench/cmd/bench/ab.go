package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"mirrorql/tools/seed"
)

// abFlags: the A/B comparison of two builds (-ab), how a change that must
// not slow anything down is judged: the build before it (-ab) and the build
// with it (-bin) serve the same database side by side, and each route is
// driven on one, then at once on the other, the order alternated. The
// machine's slow spells last longer than a pair, so each round's new ÷ old
// is taken within the pair and the rounds' median reported. The databases
// are given, already seeded with `mirrorql seed -benchmark` (one per
// layout, say), and are only read.
type abFlags struct {
	old    string   // the baseline build
	dbs    []string // name=url
	rounds int
}

var af = registerABFlags()

func registerABFlags() *abFlags {
	a := &abFlags{}
	flag.StringVar(&a.old, "ab", "", "A/B mode: the baseline build, served in turns with -bin on each -ab-db (seeded with `mirrorql seed -benchmark`); medians of -ab-rounds rounds per route")
	flag.Func("ab-db", "`name=url`: a database of the A/B mode (repeatable, e.g. v1=postgres://…/ab_v1)", func(s string) error {
		if name, url, ok := strings.Cut(s, "="); !ok || name == "" || url == "" {
			return fmt.Errorf("want name=url, got %q", s)
		}
		a.dbs = append(a.dbs, s)
		return nil
	})
	flag.IntVar(&a.rounds, "ab-rounds", 4, "rounds of the A/B mode (each runs both builds, the order alternated)")
	return a
}

// abDataRoutes are the routes on the database at url: a scale data set's
// (-scale, its spec in the database's comment) as -scale draws them, so
// that an A/B run on it asks what -scale-pair asks; else the seed's of o.
func abDataRoutes(ctx context.Context, url string, o seed.Options) ([]route, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var comment *string
	err = c.QueryRow(ctx, "select shobj_description(oid, 'pg_database') from pg_database where datname = current_database()").Scan(&comment)
	if err != nil {
		return nil, err
	}
	if comment != nil {
		if spec, _, ok := parseScaleMarker(*comment); ok {
			plan, err := newScalePlan(spec)
			if err != nil {
				return nil, err
			}
			log.Printf("a scale data set of %d messages: its routes as -scale draws them", spec.Messages)
			return buildScaleRoutes(plan, "127.0.0.1"), nil
		}
	}
	return buildRoutes(o, "127.0.0.1", hotWindow{}), nil
}

// abResult is one build's measurements of one route on one database.
type abResult struct {
	old, new []measurement
	rps, cpu []float64 // each round's new ÷ old
}

// abGroup are the routes served by services with the same settings of
// their own (route.serviceEnv; none for most), started for them.
type abGroup struct {
	env    []string
	routes []route
}

// abGroups are routes by their settings, in the order their first route
// comes: the routes without settings of their own first.
func abGroups(routes []route) []abGroup {
	var out []abGroup
	for _, r := range routes {
		key := strings.Join(r.serviceEnv, ",")
		i := slices.IndexFunc(out, func(g abGroup) bool { return strings.Join(g.env, ",") == key })
		if i < 0 {
			out = append(out, abGroup{env: r.serviceEnv})
			i = len(out) - 1
		}
		out[i].routes = append(out[i].routes, r)
	}
	slices.SortStableFunc(out, func(a, b abGroup) int { return cmp.Compare(len(a.env), len(b.env)) })
	return out
}

// runAB measures every route on each database with both builds and prints
// new ÷ old per route: requests/s and service CPU per request; then, for
// each build, each GraphQL route ÷ the REST route set beside it (pairs.go)
// and the service's peak RSS.
func runAB(ctx context.Context, f flags, out io.Writer) error {
	if len(af.dbs) == 0 {
		return fmt.Errorf("-ab needs at least one -ab-db name=url")
	}
	o := seed.BenchmarkOptions()
	conns := f.conns[0]
	type key struct{ db, route string }
	results := map[key]*abResult{}
	var order []key
	var dbs []string
	rss := map[string]*[2][]int64{} // per database, each build's peak RSS in each round
	for _, d := range af.dbs {
		name, url, _ := strings.Cut(d, "=")
		dbs = append(dbs, name)
		rss[name] = &[2][]int64{}
		all, err := abDataRoutes(ctx, url, o)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		routes := abRoutes(f, all)
		groups := abGroups(routes)
		for round := range af.rounds {
			log.Printf("%s, round %d", name, round+1)
			j := 0 // the route's place in the round, over the groups
			for _, g := range groups {
				// Both builds serve at once (the one not measured idles),
				// so that a route's two measurements are seconds apart: the
				// machine's slow spells last longer than that.
				var svcs [2]*service
				stopAll := func() {
					for _, s := range svcs {
						if s != nil {
							s.stop()
						}
					}
				}
				for i, bin := range []string{af.old, f.bin} {
					fb := f
					fb.bin = bin
					fb.serviceEnv = append(slices.Clone(f.serviceEnv), g.env...)
					svc, err := startService(ctx, fb, url)
					if err != nil {
						stopAll()
						return fmt.Errorf("%s, %s: %w", name, bin, err)
					}
					svcs[i] = svc
					if err := checkRoutes(ctx, svc, g.routes, true); err != nil {
						stopAll()
						return fmt.Errorf("%s, %s: %w", name, bin, err)
					}
				}
				for _, r := range g.routes {
					k := key{name, r.name}
					if results[k] == nil {
						results[k] = &abResult{}
						order = append(order, k)
					}
					var pair [2]measurement
					for n := range 2 {
						i := (n + round + j) % 2 // which build goes first alternates
						m, err := measure(ctx, svcs[i], r, conns, f, nil)
						if err != nil {
							stopAll()
							return err
						}
						pair[i] = m
					}
					j++
					res := results[k]
					res.old, res.new = append(res.old, pair[0]), append(res.new, pair[1])
					res.rps = append(res.rps, pair[1].rps/pair[0].rps)
					res.cpu = append(res.cpu, pair[1].cpuPer1k/pair[0].cpuPer1k)
				}
				for i, s := range svcs {
					if len(g.env) == 0 {
						rss[name][i] = append(rss[name][i], s.hwm())
					}
					if err := s.stop(); err != nil {
						return fmt.Errorf("%s, build %d: stopping: %w", name, i, err)
					}
				}
			}
		}
	}
	fmt.Fprintf(out, "\nA/B: new %s against old %s, %d connections, %s windows, %d rounds; a route's old and new back to back, "+
		"the order alternated; figures are medians, new ÷ old the median of the rounds' ratios\n\n",
		f.bin, af.old, conns, f.duration, af.rounds)
	fmt.Fprintln(out, "| database | route | req/s old | req/s new | new ÷ old | CPU ms/req old | CPU ms/req new | new ÷ old |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, k := range order {
		r := results[k]
		mo, mn := median(r.old), median(r.new)
		fmt.Fprintf(out, "| %s | %s | %.0f | %.0f | %.3f | %.3f | %.3f | %.3f |\n", k.db, k.route,
			mo.rps, mn.rps, medianOf(r.rps), mo.cpuPer1k, mn.cpuPer1k, medianOf(r.cpu))
	}
	var pairs []abPairRow
	for _, db := range dbs {
		for _, p := range routePairs {
			g, r := results[key{db, p.gql}], results[key{db, p.rest}]
			if g == nil || r == nil {
				continue
			}
			pairs = append(pairs, abPair(db, p, g, r))
		}
	}
	writeABPairs(out, pairs)
	var rows []abRSSRow
	for _, db := range dbs {
		rows = append(rows, abRSSRow{db: db, old: rss[db][0], new: rss[db][1]})
	}
	writeABRSS(out, rows)
	return nil
}

// abPairRow is a pair of routePairs on one database: each build's GraphQL ÷
// REST, the median of the rounds' ratios (the two routes measured on the
// same build in the same round).
type abPairRow struct {
	db               string
	pair             routePair
	rpsOld, rpsNew   float64
	cpuOld, cpuNew   float64
	rounds           int
	gqlOld, gqlNew   float64 // the GraphQL route's median req/s
	restOld, restNew float64
}

func abPair(db string, p routePair, g, r *abResult) abPairRow {
	ro, co := pairRatios(g.old, r.old)
	rn, cn := pairRatios(g.new, r.new)
	return abPairRow{db: db, pair: p, rpsOld: medianOf(ro), rpsNew: medianOf(rn), cpuOld: medianOf(co), cpuNew: medianOf(cn),
		rounds: min(len(g.old), len(r.old)), gqlOld: median(g.old).rps, gqlNew: median(g.new).rps,
		restOld: median(r.old).rps, restNew: median(r.new).rps}
}

// writeABPairs prints the pairs' table: the issue 46 targets read off one
// -ab run.
func writeABPairs(out io.Writer, rows []abPairRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprint(out, "\nGraphQL ÷ REST within each build: in each round, the GraphQL route's rate (and service CPU per request) ÷ "+
		"the REST route's on the same build; the median of the rounds' ratios. A pair without a REST twin is a reference.\n\n")
	fmt.Fprintln(out, "| database | GraphQL ↔ REST | req/s ÷ old | req/s ÷ new | target | CPU/req ÷ old | CPU/req ÷ new | target |")
	fmt.Fprintln(out, "|---|---|---:|---:|---|---:|---:|---|")
	for _, r := range rows {
		name := fmt.Sprintf("%s ↔ %s", r.pair.gql, r.pair.rest)
		if !r.pair.twin {
			name += " (no twin)"
		}
		rate, cpu := "no slower than old (the route's new ÷ old above)", "–"
		if r.pair.minRate > 0 {
			rate = fmt.Sprintf("≥ %.2f: new %s", r.pair.minRate, yes(r.rpsNew >= r.pair.minRate))
		}
		if r.pair.maxCPU > 0 {
			cpu = fmt.Sprintf("≤ %.1f: new %s", r.pair.maxCPU, yes(r.cpuNew > 0 && r.cpuNew <= r.pair.maxCPU))
		}
		fmt.Fprintf(out, "| %s | %s | %.3f | %.3f | %s | %.3f | %.3f | %s |\n", r.db, name, r.rpsOld, r.rpsNew, rate,
			r.cpuOld, r.cpuNew, cpu)
	}
}

// abRSSRow is each build's peak RSS (VmHWM) on one database: a service's
// after a round's routes, one service per build and round.
type abRSSRow struct {
	db       string
	old, new []int64
}

// abRSSMax is the RSS target under the load (the deployment budget).
const abRSSMax = 64 << 20

func writeABRSS(out io.Writer, rows []abRSSRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprint(out, "\nService RSS under the load: VmHWM of each build's service after a round's routes (a fresh service each round; "+
		"the routes with settings of their own run on services of their own, not counted).\n\n")
	fmt.Fprintln(out, "| database | build | VmHWM MiB, median of the rounds | max | ≤ 64 MiB (max) |")
	fmt.Fprintln(out, "|---|---|---:|---:|---|")
	for _, r := range rows {
		for _, b := range []struct {
			name string
			v    []int64
		}{{"old", r.old}, {"new", r.new}} {
			if len(b.v) == 0 {
				continue
			}
			fs := make([]float64, len(b.v))
			for i, v := range b.v {
				fs[i] = float64(v)
			}
			top := slices.Max(b.v)
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s |\n", r.db, b.name, mib(int64(medianOf(fs))), mib(top), yes(top > 0 && top <= abRSSMax))
		}
	}
}

// abRoutes are the routes the A/B mode drives: those -routes selects, in
// the paired rounds' order (targetRoutes: a GraphQL route right after the
// REST route it is set beside), the others after them. Routes with settings
// of their own run on services of their own (abGroups).
func abRoutes(f flags, routes []route) []route {
	var out []route
	for _, r := range routes {
		if f.wants(r.name) {
			out = append(out, r)
		}
	}
	place := func(r route) int {
		if i := slices.Index(targetRoutes, r.name); i >= 0 {
			return i
		}
		return len(targetRoutes)
	}
	slices.SortStableFunc(out, func(a, b route) int { return cmp.Compare(place(a), place(b)) })
	return out
}
