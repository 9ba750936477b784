package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"strings"

	"mirrorql/seed"
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

// abResult is one build's measurements of one route on one database.
type abResult struct {
	old, new []measurement
	rps, cpu []float64 // each round's new ÷ old
}

// runAB measures every route (the suite's, minus those that need a service
// setting of their own) on each database with both builds and prints new ÷
// old per route: requests/s and service CPU per request.
func runAB(ctx context.Context, f flags, out io.Writer) error {
	if len(af.dbs) == 0 {
		return fmt.Errorf("-ab needs at least one -ab-db name=url")
	}
	o := seed.BenchmarkOptions()
	conns := f.conns[0]
	type key struct{ db, route string }
	results := map[key]*abResult{}
	var order []key
	for _, d := range af.dbs {
		name, url, _ := strings.Cut(d, "=")
		routes := abRoutes(f, buildRoutes(o, "127.0.0.1", hotWindow{}))
		for round := range af.rounds {
			// Both builds serve at once (the one not measured idles), so
			// that a route's two measurements are seconds apart: the
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
				svc, err := startService(ctx, fb, url)
				if err != nil {
					stopAll()
					return fmt.Errorf("%s, %s: %w", name, bin, err)
				}
				svcs[i] = svc
				if err := checkRoutes(ctx, svc, routes, true); err != nil {
					stopAll()
					return fmt.Errorf("%s, %s: %w", name, bin, err)
				}
			}
			log.Printf("%s, round %d", name, round+1)
			for j, r := range routes {
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
				res := results[k]
				res.old, res.new = append(res.old, pair[0]), append(res.new, pair[1])
				res.rps = append(res.rps, pair[1].rps/pair[0].rps)
				res.cpu = append(res.cpu, pair[1].cpuPer1k/pair[0].cpuPer1k)
			}
			for i, s := range svcs {
				if err := s.stop(); err != nil {
					return fmt.Errorf("%s, build %d: stopping: %w", name, i, err)
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
	return nil
}

// abRoutes are the routes the A/B mode drives: those -routes selects, less
// the ones measured on a service with settings of their own.
func abRoutes(f flags, routes []route) []route {
	var out []route
	for _, r := range routes {
		if f.wants(r.name) && len(r.serviceEnv) == 0 {
			out = append(out, r)
		}
	}
	return out
}
