package main

// The live benchmark's figures (live.go) and their section of
// BENCHMARKS.md.

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// latencyStats summarizes latencies (nearest-rank percentiles).
type latencyStats struct {
	n                       int
	min, p50, p90, p99, max time.Duration
	mean                    time.Duration
}

// percentile is the nearest-rank p-th percentile of sorted (0 < p ≤ 100):
// the smallest value with at least p % of the values at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(k, 1), len(sorted))-1]
}

func summarize(ds []time.Duration) latencyStats {
	if len(ds) == 0 {
		return latencyStats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return latencyStats{n: len(s), min: s[0], p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99),
		max: s[len(s)-1], mean: sum / time.Duration(len(s))}
}

// matchDeliveries checks that a subscriber received exactly the messages
// written, in order (consecutive sequence numbers, none missing, none
// twice), and returns the latency of each delivery (receive time minus
// commit time); problem says what is wrong, "" when nothing is.
func matchDeliveries(ws []written, seqs []int64, at []time.Duration) (lat []time.Duration, problem string) {
	lat = make([]time.Duration, 0, len(seqs))
	for i, s := range seqs {
		if i >= len(ws) {
			return lat, fmt.Sprintf("%d messages received, %d written: sequence number %d is extra", len(seqs), len(ws), s)
		}
		if s != ws[i].seq {
			return lat, fmt.Sprintf("delivery %d has sequence number %d, want %d", i+1, s, ws[i].seq)
		}
		lat = append(lat, at[i]-ws[i].commit)
	}
	if len(seqs) < len(ws) {
		return lat, fmt.Sprintf("%d of %d messages received (the first missing: %d)", len(seqs), len(ws), ws[len(seqs)].seq)
	}
	return lat, ""
}

// actualRate is the writer's rate over its messages' commits.
func actualRate(ws []written) float64 {
	if len(ws) < 2 {
		return 0
	}
	return float64(len(ws)-1) / (ws[len(ws)-1].commit - ws[0].commit).Seconds()
}

// parseLabelled reads the series of a labelled metric by the value of one
// label: `name{label="v"} 3` gives {"v": 3}.
func parseLabelled(text, name, label string) map[string]float64 {
	out := map[string]float64{}
	prefix := name + "{"
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(labels, ",") {
			k, val, _ := strings.Cut(kv, "=")
			if k == label {
				out[strings.Trim(val, `"`)] = v
			}
		}
	}
	return out
}

// busy is the machine's CPU time from /proc/stat, in clock ticks.
type busy struct{ busy, total int64 }

func readBusy() busy {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return busy{}
	}
	return parseBusy(string(b))
}

// parseBusy reads the first line of /proc/stat: busy is everything but
// idle and iowait.
func parseBusy(text string) busy {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return busy{}
	}
	var out busy
	for i, s := range f[1:] {
		v, _ := strconv.ParseInt(s, 10, 64)
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		out.total += v
		if i != 3 && i != 4 {
			out.busy += v
		}
	}
	return out
}

// since is the busy share of the machine from b0 to b.
func (b busy) since(b0 busy) float64 {
	if b.total <= b0.total {
		return -1
	}
	return float64(b.busy-b0.busy) / float64(b.total-b0.total)
}

// pollWindow is the poller over one window.
type pollWindow struct {
	label       string
	subs        int
	rate        float64 // messages/s asked of the writer (0: none)
	elapsed     time.Duration
	polls       float64 // poll statements: mirrorql_live_poll_duration_seconds_count
	pollSeconds float64 // their time: …_sum
	delivered   float64 // mirrorql_live_messages_delivered_total
	xacts       int64   // xact_commit of the database (-1 unknown)
	writes      int64   // the writer's transactions
	cpu         float64 // service CPU seconds
}

func (w pollWindow) pollsPerSec() float64 { return w.polls / w.elapsed.Seconds() }

// pgPerSec is PostgreSQL's commits on the database a second, the writer's
// taken out: the service's statements (each its own transaction).
func (w pollWindow) pgPerSec() float64 {
	if w.xacts < 0 {
		return math.NaN()
	}
	return float64(w.xacts-w.writes) / w.elapsed.Seconds()
}

func (w pollWindow) meanPoll() float64 {
	if w.polls == 0 {
		return 0
	}
	return w.pollSeconds / w.polls
}

func (w pollWindow) cpuShare() float64 { return w.cpu / w.elapsed.Seconds() }

// latencyRow is one latency phase.
type latencyRow struct {
	name              string
	redis             bool
	written, received int
	problem           string
	stats             latencyStats
	rate              float64 // the writer's, measured
	pollsPerSec       float64
	early             int // delivered before the writer's COMMIT returned
	// With the Redis wake-up: deliveries within wakeFast of the commit,
	// and the gaps to the previous publication of those over wakeSlow.
	fast     int
	slowGaps []time.Duration
}

// The Redis wake-up's latency classes: under wakeFast a delivery came from
// the poll at the publication or one of the service's rechecks after it
// (service.liveRechecks: 10, 30 and 90 ms); over wakeSlow it missed them
// all.
const (
	wakeFast = 40 * time.Millisecond
	wakeSlow = 100 * time.Millisecond
	// recheck is the service's last wake-up after a publication.
	recheck = 90 * time.Millisecond
)

// slowGaps returns, for each delivery slower than over, the time from the
// previous message's publication to its own (lat[i] belongs to ws[i]).
func slowGaps(ws []written, lat []time.Duration, over time.Duration) []time.Duration {
	var out []time.Duration
	for i, l := range lat {
		if l > over && i > 0 && i < len(ws) {
			out = append(out, ws[i].publish-ws[i-1].publish)
		}
	}
	return out
}

// fanResult is the fan-out phase.
type fanResult struct {
	subs, conns          int
	written              []written
	complete             int // subscribers with every message, in order
	problems             []string
	problemCount         int
	deliveries, expected int64
	firstCommit, lastAt  time.Duration
	stats                latencyStats
	window               time.Duration // of the CPU figures: the writer and the drain
	serviceCPU, loadCPU  float64       // seconds
	busy                 float64       // the machine's busy share
	serverDelivered      float64
	rss, hwm             int64
	heap, goroutines     float64
	pings, bad           int64
	profile              string
	profileSkip          time.Duration // the profile starts this long after the writer
	profileFor           time.Duration
	pgCPU                float64 // the service's PostgreSQL backends, seconds
	gcs                  float64 // collections of the service
	timeline             []fanSample
}

// fanSample is the service once a second during the fan-out.
type fanSample struct {
	at                time.Duration // since the writer started
	rss               int64
	heap, nextGC, gcs float64
	goroutines        float64
	cpuTicks          int64
	delivered         float64 // the service's count (cumulative)
	received          int64   // the clients' (since the writer started)
	failed            bool    // /metrics did not answer within 5 s
}

// check verifies every subscriber and gathers the latencies.
func (fo *fanResult) check(ws []written, subs []*liveSub) {
	fo.written = ws
	fo.expected = int64(len(ws)) * int64(len(subs))
	if len(ws) > 0 {
		fo.firstCommit = ws[0].commit
	}
	var all []time.Duration
	for i, s := range subs {
		seqs, at, ended := s.take()
		fo.deliveries += int64(len(seqs))
		if len(at) > 0 {
			fo.lastAt = max(fo.lastAt, at[len(at)-1])
		}
		lat, problem := matchDeliveries(ws, seqs, at)
		if problem == "" && ended != "" {
			problem = "the stream ended: " + ended
		}
		all = append(all, lat...)
		if problem == "" {
			fo.complete++
			continue
		}
		fo.problemCount++
		if len(fo.problems) < 5 {
			fo.problems = append(fo.problems, fmt.Sprintf("subscriber %d: %s", i+1, problem))
		}
	}
	fo.stats = summarize(all)
}

// offered is the deliveries a second the writer asked for: its measured
// rate times the subscribers.
func (fo *fanResult) offered() float64 { return actualRate(fo.written) * float64(fo.subs) }

// achieved is the deliveries a second from the first commit to the last
// delivery.
func (fo *fanResult) achieved() float64 {
	span := fo.lastAt - fo.firstCommit
	if span <= 0 {
		return 0
	}
	return float64(fo.deliveries) / span.Seconds()
}

// memSample is the service with some idle subscriptions.
type memSample struct {
	perConn, subs, conns int
	open                 float64 // mirrorql_live_subscriptions
	rss, rssGC           int64   // VmRSS, settled and after a collection
	heap, stack, sys     float64 // after the collection
	goroutines           float64
}

// serviceEnd is how one service's subscriptions ended.
type serviceEnd struct {
	name       string
	ended      map[string]float64
	errorLines int64
}

type liveReport struct {
	flags         liveFlags
	command       string
	started       time.Time
	elapsed       time.Duration
	machine       []string
	loadAvg       string
	loadAvgEnd    string
	pool          int
	env           []string
	data          *dataset
	topic         string
	firstSeq      int64
	idleCounts    []int
	nofileBefore  uint64
	nofile        uint64
	serviceLimits string
	startup       time.Duration

	latency          []latencyRow
	polls            []pollWindow
	redisPolls       pollWindow
	redisErr         string
	redisNote        string
	redisSubscribers int64
	pubErrs          int64
	pubErr           string
	fanout           *fanResult
	memory           []memSample
	fanGCShare       float64          // the collector's share of the fan-out's CPU profile (-1 unknown)
	memHeap          string           // pprof top of the heap at the most idle subscriptions, 1 per connection
	memGoroutines    []goroutineGroup // the goroutines then
	services         []serviceEnd
	profilePath      string
	grpc             *grpcResult // part 5, nil when not run
}

// liveCheck is one goal and its verdict.
type liveCheck struct {
	goal, measured string
	ok, judged     bool
}

func (r *liveReport) latencyAt(redis bool, rate float64) *latencyRow {
	for i := range r.latency {
		if r.latency[i].redis == redis && r.latency[i].name != "" && strings.HasSuffix(r.latency[i].name, fmt.Sprintf(", %g messages/s", rate)) {
			return &r.latency[i]
		}
	}
	return nil
}

// perSub is the growth of RSS per subscription from the sample at rest.
func perSub(rest, m memSample) float64 {
	if m.subs == 0 {
		return 0
	}
	return float64(m.rss-rest.rss) / float64(m.subs)
}

func kib(b float64) string { return fmt.Sprintf("%.1f", b/1024) }

func (r *liveReport) checks() []liveCheck {
	var cs []liveCheck
	if l := r.latencyAt(false, r.flags.rate); l != nil {
		ok := l.problem == ""
		cs = append(cs,
			liveCheck{goal: fmt.Sprintf("commit → delivery, poller alone (250 ms), %g messages/s: p50 ≤ %d ms", r.flags.rate, goalPollP50.Milliseconds()),
				measured: ms(l.stats.p50) + " ms", ok: ok && l.stats.p50 <= goalPollP50, judged: l.stats.n > 0},
			liveCheck{goal: fmt.Sprintf("… p99 ≤ %d ms", goalPollP99.Milliseconds()),
				measured: ms(l.stats.p99) + " ms", ok: ok && l.stats.p99 <= goalPollP99, judged: l.stats.n > 0})
	}
	if l := r.latencyAt(true, r.flags.rate); l != nil {
		cs = append(cs, liveCheck{goal: fmt.Sprintf("commit → delivery with the Redis wake-up, %g messages/s: p50 ≤ %d ms", r.flags.rate, goalRedisP50.Milliseconds()),
			measured: ms(l.stats.p50) + " ms", ok: l.problem == "" && l.stats.p50 <= goalRedisP50, judged: l.stats.n > 0})
	} else {
		cs = append(cs, liveCheck{goal: fmt.Sprintf("commit → delivery with the Redis wake-up: p50 ≤ %d ms", goalRedisP50.Milliseconds()),
			measured: "skipped: Redis at " + r.flags.redisAddr + " did not answer (" + r.redisErr + ")"})
	}
	for _, l := range r.latency {
		if l.problem != "" {
			cs = append(cs, liveCheck{goal: l.name + ": every message, in order", measured: l.problem, judged: true})
		}
	}
	if fo := r.fanout; fo != nil {
		cs = append(cs, liveCheck{goal: fmt.Sprintf("fan-out: each of %s subscribers gets every message in order (consecutive sequence numbers)", thousands(int64(fo.subs))),
			measured: fmt.Sprintf("%s of %s subscribers; %s of %s deliveries", thousands(int64(fo.complete)), thousands(int64(fo.subs)),
				thousands(fo.deliveries), thousands(fo.expected)),
			ok: fo.complete == fo.subs && fo.deliveries == fo.expected, judged: true})
		cs = append(cs, liveCheck{goal: fmt.Sprintf("fan-out keeps up: deliveries/s ≥ %.0f %% of the offered %s/s", fanRateShare*100, thousands(int64(math.Round(fo.offered())))),
			measured: fmt.Sprintf("%s/s (p99 %s ms)", thousands(int64(math.Round(fo.achieved()))), ms(fo.stats.p99)),
			ok:       fo.achieved() >= fanRateShare*fo.offered(), judged: fo.deliveries > 0})
	}
	// Poll statements: at 1 and at the fan-out's subscribers, without and
	// with writes at the fan-out's rate.
	find := func(subs int, rate float64) *pollWindow {
		for i := range r.polls {
			if r.polls[i].subs == subs && r.polls[i].rate == rate {
				return &r.polls[i]
			}
		}
		return nil
	}
	for _, rate := range []float64{0, r.flags.fanRate} {
		one, many := find(1, rate), find(r.flags.fanSubs, rate)
		if one == nil || many == nil {
			continue
		}
		what := "no writes"
		if rate > 0 {
			what = fmt.Sprintf("%g messages/s", rate)
		}
		ok, judged := pollsEqual(*one, *many)
		cs = append(cs, liveCheck{goal: fmt.Sprintf("poll statements/s equal at 1 and %s subscribers (± %.0f %% and one poll), %s", thousands(int64(r.flags.fanSubs)), pollRateTolerance*100, what),
			measured: fmt.Sprintf("%.3f and %.3f", one.pollsPerSec(), many.pollsPerSec()), ok: ok, judged: judged})
	}
	var rest memSample
	for _, m := range r.memory {
		if m.subs == 0 {
			rest = m
			continue
		}
		if m.subs != slicesMax(r.idleCounts) {
			continue
		}
		per := perSub(rest, m)
		cs = append(cs, liveCheck{goal: fmt.Sprintf("memory per idle subscription ≤ %d KiB, %s subscriptions, %d per connection", goalIdleBytes>>10, thousands(int64(m.subs)), m.perConn),
			measured: fmt.Sprintf("%s KiB (RSS %s → %s MiB)", kib(per), mib(rest.rss), mib(m.rss)), ok: per <= goalIdleBytes, judged: true})
	}
	if r.grpc != nil {
		cs = append(cs, r.grpc.checks()...)
	}
	return cs
}

// pollsEqual: many's poll statements/s are one's, within
// pollRateTolerance of one's and one poll (a window counts whole polls: one
// poll is its resolution); judged when one polled at all.
func pollsEqual(one, many pollWindow) (ok, judged bool) {
	a, b := one.pollsPerSec(), many.pollsPerSec()
	slack := pollRateTolerance*a + 1/min(one.elapsed.Seconds(), many.elapsed.Seconds())
	return math.Abs(b-a) <= slack, a > 0
}

// pollCells are a poll window's cells after its first column: writes,
// window s, poll statements, per s, mean statement ms, PostgreSQL commits
// per s (the writer's excluded), service CPU %.
func pollCells(w pollWindow) string {
	what := "none"
	if w.rate > 0 {
		what = fmt.Sprintf("%d at %g/s", w.writes, w.rate)
	}
	return fmt.Sprintf("%s | %.1f | %.0f | %.3f | %.2f | %.2f | %.1f", what, w.elapsed.Seconds(), w.polls,
		w.pollsPerSec(), w.meanPoll()*1000, w.pgPerSec(), w.cpuShare()*100)
}

// thousands writes 20000 as 20,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (r *liveReport) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	fl := r.flags
	p(liveBegin)
	p("")
	p("## Live topic messages (GraphQL subscriptions)")
	p("")
	p("Taken %s UTC: `%s` (%s in all, the database's seeding included) — the built `mirrorql serve`",
		r.started.Format("2006-01-02 15:04"), r.command, shortDur(r.elapsed))
	p("(`MIRRORQL_DB_POOL_SIZE=%d`%s, the live settings at their defaults: one poll every 250 ms, 10 subscriptions",
		r.pool, extraEnv(flags{serviceEnv: r.env}))
	p("per WebSocket) on `%s`, the small seed (%s messages, %s) re-created by each run. A writer appends",
		r.data.name, thousands(r.data.stats.TopicMessages), r.data.size)
	p("messages to %s (from sequence number %d) as the importer does: the message and its `transaction` row", r.topic, r.firstSeq)
	p("(ConsensusSubmitMessage, SUCCESS) in one database transaction, consensus timestamp from the wall clock;")
	p("its commit time is taken when COMMIT returns. Subscribers are graphql-transport-ws WebSockets (gorilla) in")
	p("the bench process, asking `%s` with `$t = \"%s\"` and no start time (live messages only);", liveSubscription, r.topic)
	p("a delivery's time is when its frame's header is read. Everything on 127.0.0.1. Open files: the bench set")
	p("its soft limit to %d (it was %d), and the services inherit it (`Max open files` %s). Load average at the start %s,",
		r.nofile, r.nofileBefore, r.serviceLimits, r.loadAvg)
	p("at the end %s.", r.loadAvgEnd)
	p("")
	for _, m := range r.machine {
		p("- %s", m)
	}
	p("")
	p("### Goals")
	p("")
	p("| goal | measured | |")
	p("|---|---|---|")
	for _, c := range r.checks() {
		mark := yes(c.ok)
		if !c.judged {
			mark = "not judged"
		}
		p("| %s | %s | %s |", c.goal, c.measured, mark)
	}
	p("")

	p("### 1. Latency from COMMIT to delivery (one subscriber)")
	p("")
	p("| configuration | messages written (rate) | received in order | p50 ms | p90 ms | p99 ms | max ms | min ms | polls/s |")
	p("|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, l := range r.latency {
		inOrder := "all"
		if l.problem != "" {
			inOrder = l.problem
		}
		p("| %s | %d (%.1f/s) | %s | %s | %s | %s | %s | %s | %.2f |", l.name, l.written, l.rate, inOrder,
			ms(l.stats.p50), ms(l.stats.p90), ms(l.stats.p99), ms(l.stats.max), ms(l.stats.min), l.pollsPerSec)
	}
	if r.redisErr != "" {
		p("| Redis wake-up | skipped: Redis at %s did not answer (%s) | | | | | | | |", fl.redisAddr, r.redisErr)
	}
	p("")
	p("The writer's gaps are drawn uniformly from 0.5 to 1.5 periods, so that commits fall at every phase of")
	p("the poll interval. Alone, the poller finds a message at its next poll: the wait is spread evenly over")
	p("the 250 ms interval (p50 near half of it), plus the poll's statement and the write to the socket.")
	if l := r.latencyAt(true, fl.rate); l != nil {
		p("With `MIRRORQL_LIVE_REDIS_URL=redis://%s` the writer PUBLISHes on `topic.%s` just before COMMIT",
			fl.redisAddr, strings.TrimPrefix(r.topic, "0.0."))
		p("(Redis counted %d subscriber(s) on it before the phase%s); the service polls at once on each", r.redisSubscribers, noteSuffix(r.redisNote))
		p("publication and again 10, 30 and 90 ms later (its `liveRechecks`), because the publication comes before the")
		p("commit. %d of %d deliveries arrived before the writer's COMMIT had returned (negative latency: the", l.early, l.received)
		p("row is visible to other sessions slightly before the commit's answer reaches the writer). Poll")
		p("statements in that phase: %.2f/s (each publication adds one or two).", r.redisPolls.pollsPerSec())
		p("%d of %d deliveries came within %d ms of the commit (the poll at the publication or a recheck).", l.fast, l.received, wakeFast.Milliseconds())
		if len(l.slowGaps) > 0 {
			var gaps []string
			for _, g := range l.slowGaps {
				gaps = append(gaps, ms(g))
			}
			p("%d took over %d ms; the time from the previous message's publication to theirs was %s ms.", len(l.slowGaps), wakeSlow.Milliseconds(), strings.Join(gaps, ", "))
			under := 0
			for _, g := range l.slowGaps {
				if g < recheck {
					under++
				}
			}
			if under > 0 {
				p("%d of them came less than %d ms after the previous publication: a publication that arrives while the", under, recheck.Milliseconds())
				p("previous one's recheck is still pending gets no recheck of its own (`live.WakeOnRedis` schedules one")
				p("only when none is pending), so when that earlier recheck fires before the new transaction has")
				p("committed, the message waits for the next 250 ms poll.")
				if under < len(l.slowGaps) {
					p("That does not explain the other %d.", len(l.slowGaps)-under)
				}
			} else {
				p("None came less than %d ms after the previous publication, so none waited for want of a recheck of its", recheck.Milliseconds())
				p("own (`live.WakeOnRedis` schedules one only when none is pending): their recheck found the row, and the")
				p("time beyond it was spent between the publication and the write to the socket (on a loaded machine, in")
				p("the run queue).")
			}
		}
		if r.pubErrs > 0 {
			p("PUBLISH failed %d times (%s).", r.pubErrs, r.pubErr)
		}
	}
	p("")

	if fo := r.fanout; fo != nil {
		p("### 2. Fan-out: %s subscribers on one topic", thousands(int64(fo.subs)))
		p("")
		p("%s WebSockets × %d subscriptions to %s; the writer appended %d messages at %.1f/s (asked %g/s for %s),",
			thousands(int64(fo.conns)), fo.subs/fo.conns, r.topic, len(fo.written), actualRate(fo.written), fl.fanRate, shortDur(fl.fanDuration))
		p("offering %s deliveries/s.", thousands(int64(math.Round(fo.offered()))))
		p("")
		p("| figure | value |")
		p("|---|---|")
		p("| subscribers with every message, in order, consecutive sequence numbers | %s of %s |", thousands(int64(fo.complete)), thousands(int64(fo.subs)))
		p("| deliveries received / expected | %s / %s (the service counted %s) |", thousands(fo.deliveries), thousands(fo.expected), thousands(int64(fo.serverDelivered)))
		p("| deliveries/s, first commit to last delivery | %s/s over %.2f s |", thousands(int64(math.Round(fo.achieved()))), (fo.lastAt - fo.firstCommit).Seconds())
		p("| latency COMMIT → delivery, all deliveries: p50 / p90 / p99 / max | %s / %s / %s / %s ms |", ms(fo.stats.p50), ms(fo.stats.p90), ms(fo.stats.p99), ms(fo.stats.max))
		p("| service CPU (utime+stime of /proc/<pid>/stat) | %.2f s in %.2f s: %.0f %% of a core, %.3f ms per 1,000 deliveries |",
			fo.serviceCPU, fo.window.Seconds(), fo.serviceCPU/fo.window.Seconds()*100, fo.serviceCPU/float64(max(fo.deliveries, 1))*1e6)
		p("| CPU of the service's PostgreSQL backends | %.2f s: %.0f %% of a core |", fo.pgCPU, fo.pgCPU/fo.window.Seconds()*100)
		p("| bench process CPU (the clients and the writer) | %.2f s: %.0f %% of a core |", fo.loadCPU, fo.loadCPU/fo.window.Seconds()*100)
		p("| garbage collections of the service | %.0f (%.1f/s) |", fo.gcs, fo.gcs/fo.window.Seconds())
		p("| machine busy (/proc/stat, all cores) | %.0f %% |", fo.busy*100)
		p("| service RSS at the end / peak (VmHWM) | %s / %s MiB |", mib(fo.rss), mib(fo.hwm))
		p("| Go heap in use, goroutines at the end | %s MiB, %.0f |", mib(int64(fo.heap)), fo.goroutines)
		p("")
		if len(fo.problems) > 0 {
			p("%d subscribers incomplete or out of order; the first:", fo.problemCount)
			p("")
			for _, pr := range fo.problems {
				p("- %s", pr)
			}
			p("")
		}
		if len(fo.timeline) > 0 {
			p("Once a second from the writer's start (the CPU column is the service's share of one core over the second):")
			p("")
			p("| t s | received by the clients | counted by the service | service CPU %% | RSS MiB | Go heap in use MiB | GC goal MiB | GCs | goroutines |")
			p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
			p("%s", fo.timelineTable())
			p("(Every other second shown; the service's count starts from its value at the first sample; — : the")
			p("service did not answer `/metrics` within 5 s.)")
			p("")
		}
		if fo.profile != "" {
			p("The service's CPU profile from %s after the writer's start, for %s (`MIRRORQL_PPROF_LISTEN`, `go tool pprof -top`):",
				shortDur(fo.profileSkip), shortDur(fo.profileFor))
			p("")
			p("```")
			p("%s", fo.profile)
			p("```")
			p("")
			if r.fanGCShare >= 0 {
				p("Samples with the garbage collector on the stack (`-focus` on `runtime.gcBgMarkWorker`, `gcAssistAlloc`,")
				p("`bgsweep`, `bgscavenge`, the page allocator's `scavenge`, `gcStart`, `markroot`): **%.0f %%** of the", r.fanGCShare*100)
				p("profile.")
				p("")
			}
		}
	}

	p("### 3. Poll statements")
	p("")
	p("| subscriptions | writes | window s | poll statements | per s | mean statement ms | PostgreSQL commits per s, writer's excluded | service CPU %% |")
	p("|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, w := range r.polls {
		p("| %s | %s |", thousands(int64(w.subs)), pollCells(w))
	}
	p("")
	p("Poll statements are the service's own count (`mirrorql_live_poll_duration_seconds_count`, delta over the")
	p("window). The PostgreSQL column is `xact_commit` of `pg_stat_database` for the run's database (read from")
	p("another database) minus the writer's transactions: every statement the service sends outside a")
	p("transaction is one commit, so it counts the poller and anything else the service sends. A backend")
	p("reports its commits when it goes idle at least a second after its last report, else up to 10 s later")
	p("(PostgreSQL 15's `PGSTAT_IDLE_INTERVAL`): the writer ends each window with one statement more than a")
	p("second after its last commit (so its commits are all reported, and that statement is counted as its")
	p("own), and the 1,000-subscription windows start %s after the subscriptions' reads are over. A", shortDur(pgStatsLag))
	p("subscription is counted open when it registers, before it reads its topic's history, and it reads the")
	p("topic once more a second after turning live (its safety check): every window starts only when the")
	p("service's database work has settled — two seconds in a row with no more commits than polls (at least")
	p("%s after the subscriptions are counted). The poller waits 250 ms from the end of one poll to the start", shortDur(settle))
	p("of the next, so it polls a little under 4 times a second; it never sends more, and sends fewer when")
	p("its statement takes longer (in the fan-out, `mean statement ms`: the poller's goroutine waits for CPU")
	p("behind the subscribers' and for a pool connection behind their reads). A subscription that starts at")
	p("\"now\" and found no history reads it once more on its first live message (`live.Subscription.deliver`):")
	p("in the fan-out window that is one read per subscriber, most of the PostgreSQL column's excess over the")
	p("polls there.")
	p("")

	p("### 4. Memory per idle subscription")
	p("")
	p("| per connection | subscriptions | connections | RSS MiB | RSS growth per subscription KiB | … since the previous row KiB | RSS after GC MiB | Go heap in use MiB | stacks MiB | goroutines | goroutines per subscription |")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var rest, prev memSample
	for _, m := range r.memory {
		if m.subs == 0 {
			rest = m
		}
		per, marg, gper := "", "", ""
		if m.subs > 0 {
			per = kib(perSub(rest, m))
			gper = fmt.Sprintf("%.2f", (m.goroutines-rest.goroutines)/float64(m.subs))
		}
		if m.subs > prev.subs && prev.perConn == m.perConn {
			marg = kib(float64(m.rss-prev.rss) / float64(m.subs-prev.subs))
		}
		prev = m
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %s |", m.perConn, thousands(int64(m.subs)), thousands(int64(m.conns)), mib(m.rss), per,
			marg, mib(m.rssGC), mib(int64(m.heap)), mib(int64(m.stack)), m.goroutines, gper)
	}
	p("")
	p("Each configuration is one fresh service; a row is read once its subscriptions are counted open by")
	p("`mirrorql_live_subscriptions` and their reads are over (see part 3); RSS is `VmRSS`, read before a")
	p("collection is forced through pprof (`/debug/pprof/heap?gc=1`); the heap, stacks and goroutines")
	p("(`/metrics`) and the second RSS after it. Growth per subscription is (RSS − RSS at rest) ÷")
	p("subscriptions, so it carries each connection's share (a WebSocket, its goroutines and buffers) as well:")
	p("at one per connection that is the worst case. The service's GC settings are its defaults (GOGC=300,")
	p("GOMEMLIMIT=40MiB).")
	p("")
	if len(r.memGoroutines) > 0 {
		var at memSample
		for _, m := range r.memory {
			if m.perConn == 1 && m.subs > at.subs {
				at = m
			}
		}
		p("Where the goroutines of the one-per-connection service wait at %s subscriptions (`/debug/pprof/goroutine`,", thousands(int64(at.subs)))
		p("grouped by their first frame outside the runtime and the standard library's I/O):")
		p("")
		p("| goroutines | per subscription | waiting in |")
		p("|---:|---:|---|")
		for _, g := range r.memGoroutines {
			if g.count < max(at.subs/20, 2) {
				continue
			}
			p("| %s | %.2f | `%s` |", thousands(int64(g.count)), float64(g.count)/float64(max(at.subs, 1)), g.where)
		}
		p("")
	}
	if r.memHeap != "" {
		p("Its heap then (`go tool pprof -top -sample_index=inuse_space`):")
		p("")
		p("```")
		p("%s", r.memHeap)
		p("```")
		p("")
	}
	if r.grpc != nil {
		r.grpc.markdown(p)
	}
	if len(r.services) > 0 {
		p("How the services' subscriptions ended (`mirrorql_live_subscriptions_ended_total`), and their error log lines:")
		p("")
		for _, s := range r.services {
			var parts []string
			keys := make([]string, 0, len(s.ended))
			for k := range s.ended {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s %.0f", k, s.ended[k]))
			}
			p("- %s: %s; %d lines at level ERROR", s.name, strings.Join(parts, ", "), s.errorLines)
		}
		p("")
	}
	p(liveEnd)
	return b.String()
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

// timelineTable is the fan-out's samples, every other one (and the last).
func (fo *fanResult) timelineTable() string {
	var b strings.Builder
	var first *fanSample
	prevTicks, prevAt := int64(-1), time.Duration(0)
	for i := range fo.timeline {
		t := &fo.timeline[i]
		show := i%2 == 0 || i == len(fo.timeline)-1
		if t.failed {
			if show {
				fmt.Fprintf(&b, "| %.0f | %s | — | — | — | — | — | — | — |\n", t.at.Seconds(), thousands(t.received))
			}
			continue
		}
		if first == nil {
			first = t
		}
		cpu := ""
		if prevTicks >= 0 {
			cpu = fmt.Sprintf("%.0f", float64(t.cpuTicks-prevTicks)/userHZ/(t.at-prevAt).Seconds()*100)
		}
		prevTicks, prevAt = t.cpuTicks, t.at
		if !show {
			continue
		}
		fmt.Fprintf(&b, "| %.0f | %s | +%s | %s | %s | %s | %s | %.0f | %.0f |\n", t.at.Seconds(), thousands(t.received),
			thousands(int64(t.delivered-first.delivered)), cpu, mib(t.rss), mib(int64(t.heap)), mib(int64(t.nextGC)),
			t.gcs-first.gcs, t.goroutines)
	}
	return b.String()
}

// goroutineGroup is goroutines waiting at the same place.
type goroutineGroup struct {
	count int
	where string
}

// stdFrames are packages whose frames goroutineGroups looks past: the
// runtime, the standard library's I/O and the WebSocket library.
var stdFrames = []string{"runtime.", "internal/", "sync.", "time.", "net.", "io.", "bufio.", "syscall.", "os.",
	"context.", "crypto/", "bytes.", "reflect.", "encoding/", "github.com/gorilla/websocket."}

// goroutineGroups reads a goroutine profile at debug=1 ("N @ addresses"
// then "#\taddress\tfunction+offset\tfile:line" frames) and adds the groups
// up by their first frame outside stdFrames, largest first.
func goroutineGroups(text string) []goroutineGroup {
	counts := map[string]int{}
	count, where := 0, ""
	flush := func() {
		if count > 0 {
			if where == "" {
				where = "(runtime)"
			}
			counts[where] += count
		}
		count, where = 0, ""
	}
	for _, line := range strings.Split(text, "\n") {
		if n, _, ok := strings.Cut(line, " @ "); ok {
			if v, err := strconv.Atoi(n); err == nil {
				flush()
				count = v
				continue
			}
		}
		f := strings.Split(line, "\t")
		if count == 0 || where != "" || len(f) < 3 || f[0] != "#" {
			continue
		}
		fn, _, _ := strings.Cut(f[2], "+")
		std := false
		for _, p := range stdFrames {
			std = std || strings.HasPrefix(fn, p)
		}
		if !std {
			where = fn
		}
	}
	flush()
	out := make([]goroutineGroup, 0, len(counts))
	for w, c := range counts {
		out = append(out, goroutineGroup{count: c, where: w})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].where < out[j].where
	})
	return out
}

var focusedRE = regexp.MustCompile(`Showing nodes accounting for [^,]+, ([\d.]+)% of`)

// focusedShare reads the share of the samples a pprof -top -focus listing
// shows (every node: -nodecount large, -nodefraction=0); -1 when absent.
func focusedShare(text string) float64 {
	m := focusedRE.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v / 100
}
