package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// markdown is -citus's whole report; BENCHMARKS.md gets it up to
// citusDetails.
func (r *citusReport) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	plain, citus := r.sides[0], r.sides[1]
	p("%s", citusBegin)
	p("")
	p("## Citus beside plain v2 on the same messages (`make bench-citus`)")
	p("")
	p("Run %s, %s; load average %s before, %s after. `%s`.", r.started.Format("2006-01-02 15:04 UTC"),
		r.elapsed.Round(time.Second), r.loadAvg, r.loadAvgEnd, r.command)
	p("")
	for _, m := range r.machine {
		if !strings.HasPrefix(m, "PostgreSQL:") {
			p("- %s", m)
		}
	}
	p("- **Plain v2**: one throwaway server, PostgreSQL %s (Debian's build, the one Citus is installed into; Citus not loaded).", plain.server)
	p("- **Citus %s**: a coordinator and %d workers (pgcluster.StartCitus), each a throwaway server of the same build, PostgreSQL %s,"+
		" Citus preloaded; the tables distributed as the importer's v2 migrations distribute them, in %d shards (the importer's"+
		" shardCount on mainnet), co-located with entity.", r.citusVersion, len(citus.nodes)-1, citus.server, cf.shards)
	p("- Every server has the same settings (%s, fsync off, on loopback). **The three Citus nodes, the plain server, both"+
		" services and the load generator share the same 2 cores, and other engineers' builds and tests ran on them during"+
		" the run**: the figures that hold are each route's Citus ÷ plain within a pair, not the rates themselves.",
		settingsText(r.serverSetting))
	p("")
	p("### Data sets")
	p("")
	p("The scale generator's data set (bench/cmd/bench/scale_gen.go: topic 0.0.2001 holds %.0f%% of the messages, a Zipf-like"+
		" tail over the others, from %s to today) loaded into each through COPY, then the indexes, the lookup rebuilt and"+
		" VACUUM ANALYZE.", 100*hotShares[0], plain.set.spec.firstMonth().Format("2006-01"))
	p("")
	p("| database | messages | topics | monthly partitions | shards | size (every node) | load | of which schema / copy / indexes / lookup / vacuum |")
	p("|---|---:|---:|---:|---:|---:|---:|---|")
	for _, s := range r.sides {
		shards := "–"
		if s == citus {
			shards = fmt.Sprint(cf.shards)
		}
		l := s.load
		p("| %s | %d | %d | %d | %s | %s | %s | %s / %s / %s / %s / %s |", s.label, s.set.spec.Messages, s.set.spec.Topics,
			s.set.spec.Partitions, shards, s.d.size, l.Total.Round(time.Second), l.Schema.Round(time.Second), l.Copy.Round(time.Second),
			l.Index.Round(time.Second), l.Lookup.Round(time.Second), l.Vacuum.Round(time.Second))
	}
	p("")
	p("### Rates: Citus ÷ plain v2")
	p("")
	p("One `mirrorql serve` on each database (pool %d), %d connections; each route on one service, then at once on the other,"+
		" the order alternated, %d rounds of %s windows after a %s warm-up of every route on each; rates and CPU are the"+
		" medians of the rounds, **Citus ÷ plain** the median of the rounds' ratios. PostgreSQL's CPU is every process of the"+
		" servers (on Citus the three nodes, the connections the coordinator opens to the workers included).",
		r.flags.pool, r.flags.conns[0], cf.rounds, cf.duration, cf.warm)
	p("")
	p("| route | plain v2 req/s | Citus req/s | **Citus ÷ plain** | p99 ms plain / Citus | PostgreSQL CPU ms/req plain / Citus | service CPU ms/req plain / Citus |")
	p("|---|---:|---:|---:|---:|---:|---:|")
	for _, pr := range r.measured() {
		a, c := median(pr.plain), median(pr.citus)
		p("| %s | %.0f | %.0f | **%.3f** | %s / %s | %.3f / %.3f | %.3f / %.3f |", a.route.title, a.rps, c.rps, medianOf(pr.ratio),
			ms(a.p99), ms(c.p99), a.pgCPUPer1k, c.pgCPUPer1k, a.cpuPer1k, c.cpuPer1k)
	}
	r.gqlBesideREST(p)
	p("")
	p("Answers of plain v2 and Citus to the same requests (the first %d of each route): %s.", pairSample, r.same)
	p("")
	p("### Statements and Citus tasks per request")
	p("")
	p("The first %d requests of each route served through the service's handler in process, twice (the first pass learns"+
		" the topic maps, as on a service that has run a while), the second pass's statements counted; on Citus each"+
		" explained as the service has it planned (for its values), its tasks the sum of its plan's Task Counts (a"+
		" subplan's included). A statement is routed (one task on one worker), fans out (several tasks, or a subplan run"+
		" first), or runs on the coordinator alone (the partition checks). A busy service sends fewer statements for the"+
		" point lookups than this (it batches those that wait, db/coalesce.go).", cf.sample)
	p("")
	p("| route | statements/request plain | statements/request Citus | **Citus tasks/request** | Citus statements: routed / fan-out / coordinator |")
	p("|---|---:|---:|---:|---|")
	for _, name := range scaleRouteNames {
		sa, sc := plain.stmts[name], citus.stmts[name]
		if sa == nil || sc == nil || sa.requests == 0 || sc.requests == 0 {
			continue
		}
		pr := r.pairs[name]
		title := name
		if pr != nil && len(pr.plain) > 0 {
			title = pr.plain[0].route.title
		}
		n := float64(sc.requests)
		p("| %s | %.2f | %.2f | **%.2f** | %.2f / %.2f / %.2f |", title, float64(sa.statements)/float64(sa.requests),
			float64(sc.statements)/n, float64(sc.tasks)/n, float64(sc.kinds["router"])/n, float64(sc.kinds["fan-out"])/n,
			float64(sc.kinds["coordinator"])/n)
	}
	p("")
	r.liveSection(p)
	problemsSection(p, r.problems)
	p("%s", citusDetails)
	p("")
	p("| route | plain v2 req/s (p99 ms) | Citus req/s (p99 ms) | Citus ÷ plain | errors |")
	p("|---|---|---|---|---:|")
	for _, pr := range r.measured() {
		var a, c, q []string
		var errs int64
		for i := range pr.plain {
			a = append(a, fmt.Sprintf("%.0f (%s)", pr.plain[i].rps, ms(pr.plain[i].p99)))
			c = append(c, fmt.Sprintf("%.0f (%s)", pr.citus[i].rps, ms(pr.citus[i].p99)))
			q = append(q, fmt.Sprintf("%.3f", pr.ratio[i]))
			errs += pr.plain[i].errors + pr.citus[i].errors
		}
		p("| %s | %s | %s | %s | %d |", pr.plain[0].route.title, strings.Join(a, ", "), strings.Join(c, ", "), strings.Join(q, ", "), errs)
	}
	p("")
	p("### Routes")
	p("")
	for _, pr := range r.measured() {
		p("- %s: `%s`", pr.plain[0].route.title, pr.plain[0].route.example)
	}
	p("")
	p("### Each route's statements on Citus")
	p("")
	for _, name := range scaleRouteNames {
		sc := citus.stmts[name]
		if sc == nil {
			continue
		}
		p("%s:", name)
		p("")
		for _, sh := range sc.shapes {
			p("- %s, %d task(s): `%s`", sh.kind, sh.tasks, strings.ReplaceAll(sh.sql, "`", "'"))
		}
		p("")
	}
	for _, s := range r.sides {
		for _, sp := range s.poll {
			if sp.plan == "" || sp.topics == 1 {
				continue
			}
			p("### Live poll on %s, %d topics", s.label, sp.topics)
			p("")
			planBlock(p, sp.sql, sp.plan)
		}
	}
	p("%s", citusEnd)
	return b.String()
}

// measured are the routes' pairs, in scaleRouteNames' order.
func (r *citusReport) measured() []*citusPair {
	var out []*citusPair
	for _, name := range scaleRouteNames {
		if pr := r.pairs[name]; pr != nil && len(pr.plain) > 0 {
			out = append(out, pr)
		}
	}
	return out
}

// liveSection is the live poll on both: live.go's windows and fan-out, and
// the poll statement alone.
func (r *citusReport) liveSection(p func(string, ...any)) {
	if !cf.live && len(r.sides[0].poll) == 0 {
		return
	}
	p("### The live poll, 1 and %d subscribers", lf.fanSubs)
	p("")
	if cf.live {
		p("live.go's poller phases on a service of each database (one after the other, plain first): GraphQL subscriptions"+
			" to topic 0.0.2001 (%d per WebSocket), a writer appending its messages as the importer does (message and"+
			" transaction row in one transaction); %s windows, the latency phases' writer %g messages/s for %s, the"+
			" fan-out's %g messages/s for %s. Poll statements are the service's metric; commits are PostgreSQL's on the"+
			" plain database, the writer's taken out (not shown on Citus: the coordinator's count mixes the writer's"+
			" distributed transactions with Citus's own sessions).", lf.fanPerConn, lf.window, lf.rate, lf.latency,
			lf.fanRate, lf.fanDuration)
		p("")
		p("| database | window | poll statements/s | mean poll ms | PostgreSQL commits/s | service CPU %% |")
		p("|---|---|---:|---:|---:|---:|")
		for _, s := range r.sides {
			if s.live == nil {
				p("| %s | %s | | | | |", s.label, shorten(s.liveErr, 200))
				continue
			}
			for _, w := range s.live.polls {
				commits := nanDash(w.pgPerSec(), "%.2f")
				if s == r.sides[1] {
					commits = "–"
				}
				p("| %s | %s | %.2f | %.2f | %s | %.1f |", s.label, w.label, w.pollsPerSec(), w.meanPoll()*1000, commits, 100*w.cpuShare())
			}
		}
		p("")
		p("| database | one subscriber: commit → delivery | received | p50 ms | p90 ms | p99 ms | max ms | |")
		p("|---|---|---:|---:|---:|---:|---:|---|")
		for _, s := range r.sides {
			if s.live == nil {
				continue
			}
			for _, l := range s.live.latency {
				p("| %s | %s | %d of %d | %s | %s | %s | %s | %s |", s.label, l.name, l.received, l.written, ms(l.stats.p50),
					ms(l.stats.p90), ms(l.stats.p99), ms(l.stats.max), l.problem)
			}
		}
		p("")
		p("| database | fan-out: subscribers complete | deliveries | delivered/s (offered) | latency p50 / p99 / max ms | service CPU s | PostgreSQL CPU s (every node) |")
		p("|---|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.sides {
			if s.live == nil || s.live.fanout == nil {
				continue
			}
			fo := s.live.fanout
			p("| %s | %d of %d | %d of %d | %.0f (%.0f) | %s / %s / %s | %.2f | %.2f |", s.label, fo.complete, fo.subs,
				fo.deliveries, fo.expected, fo.achieved(), fo.offered(), ms(fo.stats.p50), ms(fo.stats.p99), ms(fo.stats.max),
				fo.serviceCPU, fo.pgCPU)
			for _, pr := range fo.problems {
				p("- %s: %s", s.label, pr)
			}
		}
		p("")
	}
	p("The poll statement alone (db.LivePoll, limit 5,000, from ten minutes before the newest message), with 1 and 1,000" +
		" subscribed topics: pgbench on one connection for 5 s, sent as the service sends it; its Citus tasks from its plan.")
	p("")
	p("| database | topics | Citus tasks | pgbench tps | latency avg ms | p99 ms | |")
	p("|---|---:|---:|---:|---:|---:|---|")
	for _, s := range r.sides {
		for _, sp := range s.poll {
			tasks := "–"
			if s == r.sides[1] && sp.plan != "" {
				n, kind := citusPlanTasks(sp.plan)
				tasks = fmt.Sprintf("%d (%s)", n, kind)
			}
			p("| %s | %d | %s | %.0f | %s | %s | %s |", s.label, sp.topics, tasks, sp.fl.tps, ms(sp.fl.avgLatency), ms(sp.fl.p99),
				shorten(sp.err, 200))
		}
	}
	p("")
}

func nanDash(v float64, format string) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// settingsText is server settings as "name value, …", in a fixed order.
func settingsText(s map[string]string) string {
	var out []string
	for _, k := range []string{"shared_buffers", "max_connections", "max_locks_per_transaction"} {
		if v, ok := s[k]; ok {
			out = append(out, k+" "+v)
		}
	}
	return strings.Join(out, ", ")
}

// citusGQLPair is a pair of routePairs measured on both: each side's
// GraphQL ÷ REST and each route's Citus ÷ plain, medians of the rounds.
type citusGQLPair struct {
	pair                   routePair
	plainRatio, citusRatio float64 // GraphQL ÷ REST on each side
	restCitus, gqlCitus    float64 // Citus ÷ plain of each route
	diff                   float64 // GraphQL's Citus ÷ plain − REST's, the median of the rounds'
	rounds                 int
}

// citusMaxDiff is issue 46's target: the GraphQL page's Citus ÷ plain
// within 0.1 of REST's.
const citusMaxDiff = 0.1

// gqlPairs are routePairs' twins both of whose routes ran: in each round,
// each side's GraphQL ÷ REST and each route's Citus ÷ plain.
func (r *citusReport) gqlPairs() []citusGQLPair {
	var out []citusGQLPair
	for _, p := range routePairs {
		g, rr := r.pairs[p.gql], r.pairs[p.rest]
		if !p.twin || g == nil || rr == nil {
			continue
		}
		c := citusGQLPair{pair: p}
		pr, _ := pairRatios(g.plain, rr.plain)
		cr, _ := pairRatios(g.citus, rr.citus)
		var rc, gc, diff []float64
		for i := range min(len(g.plain), len(rr.plain), len(g.citus), len(rr.citus)) {
			if g.plain[i].rps > 0 && rr.plain[i].rps > 0 {
				a, b := g.citus[i].rps/g.plain[i].rps, rr.citus[i].rps/rr.plain[i].rps
				gc, rc, diff = append(gc, a), append(rc, b), append(diff, a-b)
			}
		}
		if len(diff) == 0 {
			continue
		}
		c.plainRatio, c.citusRatio = medianMid(pr), medianMid(cr)
		c.gqlCitus, c.restCitus, c.diff, c.rounds = medianMid(gc), medianMid(rc), medianMid(diff), len(diff)
		out = append(out, c)
	}
	return out
}

// gqlBesideREST is the table of gqlPairs.
func (r *citusReport) gqlBesideREST(p func(string, ...any)) {
	pairs := r.gqlPairs()
	if len(pairs) == 0 {
		return
	}
	p("")
	p("GraphQL beside REST (the same data): each side's GraphQL ÷ REST, each route's Citus ÷ plain, and their difference"+
		" (GraphQL's Citus ÷ plain − REST's), each the median of the %d rounds' figures. A GraphQL route bound by the"+
		" service's CPU where REST's is bound by the database keeps its rate on Citus while REST's falls: a difference"+
		" above 0.", pairs[0].rounds)
	p("")
	p("| GraphQL ↔ REST | GraphQL ÷ REST plain | GraphQL ÷ REST Citus | REST Citus ÷ plain | GraphQL Citus ÷ plain | **difference** | target (issue 46) |")
	p("|---|---:|---:|---:|---:|---:|---|")
	for _, c := range pairs {
		verdict := "–"
		if c.pair.citus {
			verdict = fmt.Sprintf("within ±%.1f: %s", citusMaxDiff, yes(math.Abs(c.diff) <= citusMaxDiff))
		}
		p("| `%s` ↔ `%s` | %.3f | %.3f | %.3f | %.3f | **%+.3f** | %s |", c.pair.gql, c.pair.rest, c.plainRatio, c.citusRatio,
			c.restCitus, c.gqlCitus, c.diff, verdict)
	}
}
