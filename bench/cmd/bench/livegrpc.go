package main

// The SDKs' face in the live benchmark (`make bench-live`, part 5): the
// mirror node's ConsensusService.subscribeTopic over gRPC (connect-go's
// client, plaintext HTTP/2) on the service's MIRRORQL_GRPC_LISTEN, beside
// GraphQL over WebSocket on the same topic; one subscriber at the
// fan-out's rate (the poll statements' reference); idle gRPC streams at
// each of -live-idle; 1,000 gRPC subscribers on one topic; and 1,000 split
// across both faces.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"mirrorql/consensus/mirrorpb"
	"mirrorql/consensus/mirrorpb/mirrorpbconnect"
)

// goalGRPCLatency: gRPC's p50 commit → delivery may differ from the
// WebSocket's on the same topic, in the same window, by this fraction.
const goalGRPCLatency = 0.10

// openGRPC opens conns HTTP/2 connections to addr with perConn
// subscribeTopic streams each (the service's cap per connection is 10),
// following topic num from now; close ends them all and their connections.
func openGRPC(ctx context.Context, addr string, num int64, conns, perConn int) (closeAll func(), subs []*liveSub) {
	ctx, cancel := context.WithCancel(ctx)
	var transports []*http.Transport
	var wg sync.WaitGroup
	for range conns {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		transports = append(transports, tr)
		client := mirrorpbconnect.NewConsensusServiceClient(&http.Client{Transport: tr}, "http://"+addr, connect.WithGRPC())
		for range perConn {
			s := &liveSub{}
			subs = append(subs, s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := &mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{TopicNum: num}}
				stream, err := client.SubscribeTopic(ctx, connect.NewRequest(q))
				if err != nil {
					s.end(err.Error())
					return
				}
				for stream.Receive() {
					s.record(int64(stream.Msg().SequenceNumber), clock()) //nolint:gosec // a ledger's sequence number
				}
				err = stream.Err()
				_ = stream.Close()
				switch {
				case err == nil:
					s.end("complete")
				case errors.Is(err, context.Canceled) || ctx.Err() != nil:
					s.end("closed")
				default:
					s.end(err.Error())
				}
			}()
		}
	}
	return func() {
		cancel()
		// A connection is idle, and closed, once its streams have ended.
		wg.Wait()
		for _, tr := range transports {
			tr.CloseIdleConnections()
		}
	}, subs
}

// grpcResult is part 5.
type grpcResult struct {
	latency []latencyRow // the WebSocket's, then gRPC's, in one window
	// one is a single subscriber at the fan-out's rate: the reference of
	// the poll statements on both faces.
	one pollWindow
	// idle is the service with no subscription, then with each count of
	// idle gRPC streams (perConn a connection); conns there is the
	// service's established connections on its gRPC port.
	idle   []memSample
	fanout *fanResult
	polls  pollWindow // of the fan-out
	// both is the window with half the fan-out's subscribers on each face
	// (the WebSocket's first in its subscriber numbers).
	both      *fanResult
	bothPolls pollWindow
	bothWS    int // of both.subs, over GraphQL over WebSocket; the rest over gRPC
}

// grpcPhase is part 5 on a service of its own with a gRPC listener.
func (r *liveRun) grpcPhase(topicNum int64, idle []int) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	gaddr := fmt.Sprintf("127.0.0.1:%d", port)
	svc, err := r.startLive("MIRRORQL_GRPC_LISTEN=" + gaddr)
	if err != nil {
		return err
	}
	defer svc.stop()
	res := &grpcResult{}
	r.rep.grpc = res

	// One WebSocket and one gRPC subscriber, the same messages.
	cs, wsSubs, err := openLive(r.ctx, r.host, r.topic, 1, 1, 1, 1)
	if err != nil {
		return err
	}
	defer closeLive(cs)
	closeG, gSubs := openGRPC(r.ctx, gaddr, topicNum, 1, 1)
	defer closeG()
	if err := r.waitOpen(2, append(wsSubs, gSubs...), 10*time.Second); err != nil {
		return err
	}
	n := int(lf.rate * lf.latency.Seconds())
	w, ws, err := r.window(svc, fmt.Sprintf("1 WebSocket + 1 gRPC subscription, %g messages/s", lf.rate), 2, n, lf.rate, 0)
	if err != nil {
		return err
	}
	res.latency = append(res.latency,
		r.latencyOf(fmt.Sprintf("GraphQL over WebSocket, %g messages/s", lf.rate), wsSubs[0], ws, w.polls, w.elapsed),
		r.latencyOf(fmt.Sprintf("gRPC, %g messages/s", lf.rate), gSubs[0], ws, w.polls, w.elapsed))

	// The WebSocket's subscriber alone at the fan-out's rate.
	closeG()
	if err := r.waitOpen(1, wsSubs, 10*time.Second); err != nil {
		return err
	}
	n = int(lf.fanRate * lf.window.Seconds())
	if res.one, _, err = r.window(svc, fmt.Sprintf("1 subscription, %g messages/s", lf.fanRate), 1, n, lf.fanRate, 0); err != nil {
		return err
	}
	closeLive(cs)
	if err := r.waitOpen(0, nil, 10*time.Second); err != nil {
		return err
	}

	// Idle gRPC streams, the fan-out's among them or opened after.
	subs, closeFan, err := r.grpcIdle(svc, gaddr, port, topicNum, idle)
	if err != nil {
		return err
	}
	defer closeFan()
	conns := lf.fanSubs / lf.fanPerConn
	if subs == nil {
		t := time.Now()
		closeFan, subs = openGRPC(r.ctx, gaddr, topicNum, conns, lf.fanPerConn)
		defer closeFan()
		log.Printf("opening %d gRPC subscriptions on %d connections for the fan-out", lf.fanSubs, conns)
		if err := r.waitOpen(lf.fanSubs, subs, 60*time.Second); err != nil {
			return err
		}
		log.Printf("%d gRPC subscriptions on %d connections open and settled in %v", lf.fanSubs, conns, time.Since(t).Round(time.Millisecond))
	} else if err := r.waitOpen(lf.fanSubs, subs, 60*time.Second); err != nil {
		return err
	}

	// The fan-out over gRPC.
	fo := &fanResult{subs: lf.fanSubs, conns: conns}
	c0, b0, t0 := svc.cpuTicks(), readBusy(), clock()
	n = int(lf.fanRate * lf.fanDuration.Seconds())
	w, ws, err = r.window(svc, fmt.Sprintf("%d gRPC subscriptions, %g messages/s", lf.fanSubs, lf.fanRate), lf.fanSubs, n, lf.fanRate, 0)
	if err != nil {
		return err
	}
	res.polls = w
	r.waitDelivered(subs, len(ws), 60*time.Second)
	fo.window, fo.serviceCPU, fo.busy = clock()-t0, float64(svc.cpuTicks()-c0)/userHZ, readBusy().since(b0)
	fo.rss = svc.status("VmRSS")
	fo.check(ws, subs)
	log.Printf("gRPC fan-out: %d of %d subscribers complete and in order, %d of %d deliveries, %.0f deliveries/s (offered %.0f), latency p50 %v p99 %v",
		fo.complete, fo.subs, fo.deliveries, fo.expected, fo.achieved(), fo.offered(),
		fo.stats.p50.Round(100*time.Microsecond), fo.stats.p99.Round(100*time.Microsecond))
	for _, p := range fo.problems {
		log.Printf("  %s", p)
	}
	res.fanout = fo
	closeFan()
	if err := r.waitOpen(0, nil, 10*time.Second); err != nil {
		return err
	}

	if err := r.bothFaces(svc, gaddr, topicNum); err != nil {
		return err
	}
	_ = sleepCtx(r.ctx, time.Second)
	r.stopLive(svc, "gRPC")
	return nil
}

// grpcIdle samples the service's memory at rest and with each count of
// idle gRPC streams, lf.fanPerConn a connection, opening the streams each
// count adds. When a count is the fan-out's, its streams are kept for it
// (subs, closed by closeSubs); the others are closed on return.
func (r *liveRun) grpcIdle(svc *service, gaddr string, port int, topicNum int64, counts []int) (subs []*liveSub, closeSubs func(), err error) {
	res := r.rep.grpc
	closeSubs = func() {}
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	sample := func(n int) memSample {
		m := memSample{perConn: lf.fanPerConn, subs: n, conns: tcpEstablished(port), rss: svc.status("VmRSS")}
		mm := r.metrics()
		m.open, m.heap, m.stack, m.goroutines, m.sys = mm["mirrorql_live_subscriptions"], mm["go_memstats_heap_inuse_bytes"],
			mm["go_memstats_stack_inuse_bytes"], mm["go_goroutines"], mm["go_memstats_sys_bytes"]
		log.Printf("memory, gRPC, %d per connection: %5d streams on %4d connections: RSS %s MiB, heap in use %s MiB, stacks %s MiB, %.0f goroutines",
			lf.fanPerConn, n, m.conns, mib(m.rss), mib(int64(m.heap)), mib(int64(m.stack)), m.goroutines)
		return m
	}
	res.idle = append(res.idle, sample(0))
	var all []*liveSub
	for _, n := range counts {
		add := n - len(all)
		if add%lf.fanPerConn != 0 {
			return nil, closeSubs, fmt.Errorf("%d gRPC streams are not whole connections of %d", n, lf.fanPerConn)
		}
		t := time.Now()
		c, ss := openGRPC(r.ctx, gaddr, topicNum, add/lf.fanPerConn, lf.fanPerConn)
		closers, all = append(closers, c), append(all, ss...)
		if err := r.waitOpen(n, ss, 60*time.Second); err != nil {
			return nil, closeSubs, fmt.Errorf("idle gRPC streams at %d: %w", n, err)
		}
		log.Printf("%d more gRPC streams open and settled in %v", add, time.Since(t).Round(time.Millisecond))
		res.idle = append(res.idle, sample(n))
		if n == lf.fanSubs {
			kept := closers
			closers = nil
			subs = all
			closeSubs = func() {
				for _, c := range kept {
					c()
				}
			}
		}
	}
	return subs, closeSubs, nil
}

// bothFaces is the fan-out split across both faces: half its subscribers
// over GraphQL over WebSocket, half over gRPC, on the topic at the
// fan-out's rate for one poll-counting window.
func (r *liveRun) bothFaces(svc *service, gaddr string, topicNum int64) error {
	res := r.rep.grpc
	half := lf.fanSubs / 2
	conns := half / lf.fanPerConn
	t := time.Now()
	cs, wsSubs, err := openLive(r.ctx, r.host, r.topic, conns, lf.fanPerConn, 32, lf.sources)
	if err != nil {
		return err
	}
	defer closeLive(cs)
	closeG, gSubs := openGRPC(r.ctx, gaddr, topicNum, conns, lf.fanPerConn)
	defer closeG()
	subs := append(wsSubs, gSubs...)
	if err := r.waitOpen(len(subs), subs, 60*time.Second); err != nil {
		return err
	}
	// As in part 3: the backends that read for the new subscriptions
	// report their commits before the window's first reading.
	if err := sleepCtx(r.ctx, pgStatsLag); err != nil {
		return err
	}
	log.Printf("%d WebSocket and %d gRPC subscriptions on %d + %d connections open and settled in %v", half, half, conns, conns,
		time.Since(t).Round(time.Millisecond))
	fo := &fanResult{subs: len(subs), conns: 2 * conns}
	c0, b0, t0 := svc.cpuTicks(), readBusy(), clock()
	n := int(lf.fanRate * lf.window.Seconds())
	w, ws, err := r.window(svc, fmt.Sprintf("%d WebSocket + %d gRPC subscriptions, %g messages/s", half, half, lf.fanRate),
		len(subs), n, lf.fanRate, 0)
	if err != nil {
		return err
	}
	res.bothPolls, res.bothWS = w, half
	r.waitDelivered(subs, len(ws), 60*time.Second)
	fo.window, fo.serviceCPU, fo.busy = clock()-t0, float64(svc.cpuTicks()-c0)/userHZ, readBusy().since(b0)
	fo.rss = svc.status("VmRSS")
	fo.check(ws, subs)
	for _, c := range cs {
		fo.pings += c.pings.Load()
		fo.bad += c.bad.Load()
	}
	log.Printf("both faces: %d of %d subscribers complete and in order, %d of %d deliveries, %.0f deliveries/s (offered %.0f), latency p50 %v p99 %v",
		fo.complete, fo.subs, fo.deliveries, fo.expected, fo.achieved(), fo.offered(),
		fo.stats.p50.Round(100*time.Microsecond), fo.stats.p99.Round(100*time.Microsecond))
	for _, p := range fo.problems {
		log.Printf("  %s", p)
	}
	res.both = fo
	closeLive(cs)
	closeG()
	return nil
}

// tcpEstablished counts the established TCP connections on local port
// (IPv4 and IPv6): a server's accepted connections.
func tcpEstablished(port int) int {
	n := 0
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(path)
		if err != nil {
			continue
		}
		n += countEstablished(bufio.NewScanner(fh), port)
		fh.Close()
	}
	return n
}

// countEstablished reads /proc/net/tcp's lines ("sl local_address
// rem_address st …", addresses as hex IP:port, st 01 for ESTABLISHED).
func countEstablished(sc *bufio.Scanner, port int) int {
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[3] != "01" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
			n++
		}
	}
	return n
}

// grpcChecks are part 5's goals.
func (g *grpcResult) checks() []liveCheck {
	var cs []liveCheck
	if len(g.latency) == 2 {
		ws, gr := g.latency[0], g.latency[1]
		ratio := float64(gr.stats.p50) / float64(ws.stats.p50)
		cs = append(cs, liveCheck{
			goal: fmt.Sprintf("commit → delivery over gRPC within %.0f %% of GraphQL over WebSocket on the same topic (p50, one window)", goalGRPCLatency*100),
			measured: fmt.Sprintf("%s ms and %s ms (×%.3f); p99 %s and %s ms", ms(gr.stats.p50), ms(ws.stats.p50), ratio,
				ms(gr.stats.p99), ms(ws.stats.p99)),
			ok:     ws.problem == "" && gr.problem == "" && ratio <= 1+goalGRPCLatency && ratio >= 1-goalGRPCLatency,
			judged: ws.stats.n > 0 && gr.stats.n > 0})
	}
	var rest memSample
	for _, m := range g.idle {
		if m.subs == 0 {
			rest = m
			continue
		}
		per := perSub(rest, m)
		cs = append(cs, liveCheck{
			goal:     fmt.Sprintf("memory per idle gRPC stream ≤ %d KiB, %s streams, %d per connection", goalIdleBytes>>10, thousands(int64(m.subs)), m.perConn),
			measured: fmt.Sprintf("%s KiB (RSS %s → %s MiB)", kib(per), mib(rest.rss), mib(m.rss)), ok: per <= goalIdleBytes, judged: true})
	}
	if fo := g.fanout; fo != nil {
		cs = append(cs, liveCheck{
			goal: fmt.Sprintf("gRPC fan-out: each of %s subscribers gets every message in order at %g messages/s", thousands(int64(fo.subs)), g.polls.rate),
			measured: fmt.Sprintf("%s of %s subscribers; %s of %s deliveries; %s/s (p99 %s ms)", thousands(int64(fo.complete)), thousands(int64(fo.subs)),
				thousands(fo.deliveries), thousands(fo.expected), thousands(int64(fo.achieved())), ms(fo.stats.p99)),
			ok: fo.complete == fo.subs && fo.deliveries == fo.expected, judged: true})
	}
	if fo := g.both; fo != nil {
		cs = append(cs, liveCheck{
			goal: fmt.Sprintf("both faces: each of %s subscribers (%s over WebSocket + %s over gRPC) gets every message in order at %g messages/s",
				thousands(int64(fo.subs)), thousands(int64(g.bothWS)), thousands(int64(fo.subs-g.bothWS)), g.bothPolls.rate),
			measured: fmt.Sprintf("%s of %s subscribers; %s of %s deliveries; %s/s (p99 %s ms)", thousands(int64(fo.complete)), thousands(int64(fo.subs)),
				thousands(fo.deliveries), thousands(fo.expected), thousands(int64(fo.achieved())), ms(fo.stats.p99)),
			ok: fo.complete == fo.subs && fo.deliveries == fo.expected, judged: true})
		if g.one.elapsed > 0 && g.bothPolls.elapsed > 0 {
			ok, judged := pollsEqual(g.one, g.bothPolls)
			cs = append(cs, liveCheck{
				goal: fmt.Sprintf("poll statements/s equal at 1 and %s subscribers split across both faces (± %.0f %% and one poll), %g messages/s",
					thousands(int64(fo.subs)), pollRateTolerance*100, g.bothPolls.rate),
				measured: fmt.Sprintf("%.3f and %.3f", g.one.pollsPerSec(), g.bothPolls.pollsPerSec()), ok: ok, judged: judged})
		}
	}
	return cs
}

// report is part 5 alone: its goals, then its section.
func (g *grpcResult) report() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("| goal | measured | |")
	p("|---|---|---|")
	for _, c := range g.checks() {
		p("| %s | %s | %s |", c.goal, c.measured, yes(c.ok))
	}
	p("")
	g.markdown(p)
	return b.String()
}

// markdown is part 5's section of the report.
func (g *grpcResult) markdown(p func(string, ...any)) {
	p("### 5. gRPC (ConsensusService.subscribeTopic)")
	p("")
	p("A service with `MIRRORQL_GRPC_LISTEN`; gRPC subscribers are connect-go clients (gRPC protocol, plaintext")
	p("HTTP/2), each stream `subscribeTopic` from now. First one WebSocket and one gRPC subscriber in the same")
	p("window, fed by the same polls; then the WebSocket's subscriber alone at the fan-out's rate; idle gRPC")
	p("streams; %s gRPC subscribers; and %s split across both faces, half over each. Every", thousands(int64(lf.fanSubs)), thousands(int64(lf.fanSubs)))
	p("connection carries %d streams (or WebSocket subscriptions).", lf.fanPerConn)
	p("")
	p("| subscriber | messages written (rate) | received in order | p50 ms | p90 ms | p99 ms | max ms | min ms |")
	p("|---|---:|---|---:|---:|---:|---:|---:|")
	for _, l := range g.latency {
		inOrder := "all"
		if l.problem != "" {
			inOrder = l.problem
		}
		p("| %s | %d (%.1f/s) | %s | %s | %s | %s | %s | %s |", l.name, l.written, l.rate, inOrder,
			ms(l.stats.p50), ms(l.stats.p90), ms(l.stats.p99), ms(l.stats.max), ms(l.stats.min))
	}
	p("")
	if len(g.idle) > 0 {
		p("Idle gRPC streams, opened in steps on the service (none open before), each row read once the service")
		p("counts them open and its database work has settled (as in part 3); RSS is `VmRSS`, growth per stream")
		p("(RSS − RSS at rest) ÷ streams, so it carries each HTTP/2 connection's share; connections are the")
		p("service's established TCP connections on its gRPC port (`/proc/net/tcp`); no collection is forced.")
		p("")
		p("| streams | connections | open subscriptions | RSS MiB | RSS growth per stream KiB | … since the previous row KiB | Go heap in use MiB | stacks MiB | goroutines | goroutines per stream |")
		p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		var rest, prev memSample
		for _, m := range g.idle {
			if m.subs == 0 {
				rest = m
			}
			per, marg, gper := "", "", ""
			if m.subs > 0 {
				per = kib(perSub(rest, m))
				gper = fmt.Sprintf("%.2f", (m.goroutines-rest.goroutines)/float64(m.subs))
			}
			if m.subs > prev.subs {
				marg = kib(float64(m.rss-prev.rss) / float64(m.subs-prev.subs))
			}
			prev = m
			p("| %s | %s | %.0f | %s | %s | %s | %s | %s | %.0f | %s |", thousands(int64(m.subs)), thousands(int64(m.conns)), m.open, mib(m.rss),
				per, marg, mib(int64(m.heap)), mib(int64(m.stack)), m.goroutines, gper)
		}
		p("")
	}
	if fo := g.fanout; fo != nil {
		p("gRPC fan-out: %s subscribers on %s connections, %d messages at %.1f/s: %s complete and in order, %s of %s",
			thousands(int64(fo.subs)), thousands(int64(fo.conns)), len(fo.written), actualRate(fo.written),
			thousands(int64(fo.complete)), thousands(fo.deliveries), thousands(fo.expected))
		p("deliveries, %s/s (offered %s/s); latency p50 %s ms, p90 %s ms, p99 %s ms, max %s ms; the service's CPU %.1f s",
			thousands(int64(fo.achieved())), thousands(int64(fo.offered())), ms(fo.stats.p50), ms(fo.stats.p90), ms(fo.stats.p99),
			ms(fo.stats.max), fo.serviceCPU)
		p("over %.1f s (%.0f %% of a core; the machine %.0f %% busy), RSS %s MiB; %.3f poll statements/s in that window.", fo.window.Seconds(),
			fo.serviceCPU/fo.window.Seconds()*100, fo.busy*100, mib(fo.rss), g.polls.pollsPerSec())
		for _, pr := range fo.problems {
			p("- %s", pr)
		}
		p("")
	}
	if fo := g.both; fo != nil {
		p("Both faces: %s subscribers over GraphQL over WebSocket (subscribers 1–%s) and %s over gRPC (the rest), on",
			thousands(int64(g.bothWS)), thousands(int64(g.bothWS)), thousands(int64(fo.subs-g.bothWS)))
		p("%s connections, %d messages at %.1f/s: %s complete and in order, %s of %s deliveries, %s/s (offered",
			thousands(int64(fo.conns)), len(fo.written), actualRate(fo.written), thousands(int64(fo.complete)),
			thousands(fo.deliveries), thousands(fo.expected), thousands(int64(fo.achieved())))
		p("%s/s); latency p50 %s ms, p90 %s ms, p99 %s ms, max %s ms; the service's CPU %.1f s over %.1f s (%.0f %% of",
			thousands(int64(fo.offered())), ms(fo.stats.p50), ms(fo.stats.p90), ms(fo.stats.p99), ms(fo.stats.max),
			fo.serviceCPU, fo.window.Seconds(), fo.serviceCPU/fo.window.Seconds()*100)
		p("a core; the machine %.0f %% busy, /proc/stat), RSS %s MiB. The window starts %s after the subscriptions' reads",
			fo.busy*100, mib(fo.rss), shortDur(pgStatsLag))
		p("are over (see part 3).")
		if fo.bad > 0 {
			p("The WebSockets had %d frames the client could not read.", fo.bad)
		}
		if len(fo.problems) > 0 {
			p("")
			p("%d subscribers incomplete or out of order; the first:", fo.problemCount)
			p("")
			for _, pr := range fo.problems {
				p("- %s", pr)
			}
		}
		p("")
	}
	var windows []pollWindow
	for _, w := range []pollWindow{g.one, g.polls, g.bothPolls} {
		if w.elapsed > 0 {
			windows = append(windows, w)
		}
	}
	if len(windows) > 0 {
		p("Poll statements in part 5's windows (columns as in part 3):")
		p("")
		p("| window | writes | window s | poll statements | per s | mean statement ms | PostgreSQL commits per s, writer's excluded | service CPU %% |")
		p("|---|---|---:|---:|---:|---:|---:|---:|")
		for _, w := range windows {
			p("| %s | %s |", w.label, pollCells(w))
		}
		p("")
		if g.fanout != nil && len(g.idle) > 0 && g.idle[len(g.idle)-1].subs > g.fanout.subs {
			p("The gRPC fan-out's window starts as soon as the idle streams beyond its own are closed and the service's")
			p("database work has settled, without part 3's %s wait, so its PostgreSQL column can carry their reads,", shortDur(pgStatsLag))
			p("reported late; the poll statements are the service's own count either way.")
			p("")
		}
	}
}
