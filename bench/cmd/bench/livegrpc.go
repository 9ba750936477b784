package main

// The SDKs' face in the live benchmark (`make bench-live`, part 5): the
// mirror node's ConsensusService.subscribeTopic over gRPC (connect-go's
// client, plaintext HTTP/2) on the service's MIRRORQL_GRPC_LISTEN, beside
// GraphQL over WebSocket on the same topic, then 1,000 gRPC subscribers on
// one topic.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
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
// following topic num from now; close ends them all.
func openGRPC(ctx context.Context, addr string, num int64, conns, perConn int) (closeAll func(), subs []*liveSub) {
	ctx, cancel := context.WithCancel(ctx)
	var transports []*http.Transport
	for range conns {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		transports = append(transports, tr)
		client := mirrorpbconnect.NewConsensusServiceClient(&http.Client{Transport: tr}, "http://"+addr, connect.WithGRPC())
		for range perConn {
			s := &liveSub{}
			subs = append(subs, s)
			go func() {
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
		for _, tr := range transports {
			tr.CloseIdleConnections()
		}
	}, subs
}

// grpcResult is part 5.
type grpcResult struct {
	latency []latencyRow // the WebSocket's, then gRPC's, in one window
	fanout  *fanResult
	polls   pollWindow // of the fan-out
	// The service's RSS before the fan-out's streams opened and once they
	// had settled, idle.
	rssBefore, rssIdle int64
}

// grpcPhase is part 5 on a service of its own with a gRPC listener.
func (r *liveRun) grpcPhase(topicNum int64) error {
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
	closeG, gSubs := openGRPC(r.ctx, gaddr, topicNum, 1, 1)
	if err := r.waitOpen(2, append(wsSubs, gSubs...), 10*time.Second); err != nil {
		closeLive(cs)
		closeG()
		return err
	}
	n := int(lf.rate * lf.latency.Seconds())
	w, ws, err := r.window(svc, fmt.Sprintf("1 WebSocket + 1 gRPC subscription, %g messages/s", lf.rate), 2, n, lf.rate, 0)
	if err != nil {
		closeLive(cs)
		closeG()
		return err
	}
	res.latency = append(res.latency,
		r.latencyOf(fmt.Sprintf("GraphQL over WebSocket, %g messages/s", lf.rate), wsSubs[0], ws, w.polls, w.elapsed),
		r.latencyOf(fmt.Sprintf("gRPC, %g messages/s", lf.rate), gSubs[0], ws, w.polls, w.elapsed))
	closeLive(cs)
	closeG()
	if err := r.waitOpen(0, nil, 10*time.Second); err != nil {
		return err
	}

	// The fan-out over gRPC.
	conns := lf.fanSubs / lf.fanPerConn
	t := time.Now()
	res.rssBefore = svc.status("VmRSS")
	closeG, subs := openGRPC(r.ctx, gaddr, topicNum, conns, lf.fanPerConn)
	defer closeG()
	if err := r.waitOpen(lf.fanSubs, subs, 60*time.Second); err != nil {
		return err
	}
	res.rssIdle = svc.status("VmRSS")
	log.Printf("%d gRPC subscriptions on %d connections open and settled in %v", lf.fanSubs, conns, time.Since(t).Round(time.Millisecond))
	fo := &fanResult{subs: lf.fanSubs, conns: conns}
	c0, t0 := svc.cpuTicks(), clock()
	n = int(lf.fanRate * lf.fanDuration.Seconds())
	w, ws, err = r.window(svc, fmt.Sprintf("%d gRPC subscriptions, %g messages/s", lf.fanSubs, lf.fanRate), lf.fanSubs, n, lf.fanRate, 0)
	if err != nil {
		return err
	}
	res.polls = w
	r.waitDelivered(subs, len(ws), 60*time.Second)
	fo.window, fo.serviceCPU = clock()-t0, float64(svc.cpuTicks()-c0)/userHZ
	fo.rss = svc.status("VmRSS")
	fo.check(ws, subs)
	log.Printf("gRPC fan-out: %d of %d subscribers complete and in order, %d of %d deliveries, %.0f deliveries/s (offered %.0f), latency p50 %v p99 %v",
		fo.complete, fo.subs, fo.deliveries, fo.expected, fo.achieved(), fo.offered(),
		fo.stats.p50.Round(100*time.Microsecond), fo.stats.p99.Round(100*time.Microsecond))
	for _, p := range fo.problems {
		log.Printf("  %s", p)
	}
	res.fanout = fo
	closeG()
	_ = sleepCtx(r.ctx, time.Second)
	r.stopLive(svc, "gRPC")
	return nil
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
	if g.rssIdle > 0 && g.fanout != nil {
		per := float64(g.rssIdle-g.rssBefore) / float64(g.fanout.subs)
		cs = append(cs, liveCheck{
			goal:     fmt.Sprintf("memory per idle gRPC stream ≤ %d KiB, %s streams, %d per connection", goalIdleBytes>>10, thousands(int64(g.fanout.subs)), lf.fanPerConn),
			measured: fmt.Sprintf("%s KiB (RSS %s → %s MiB)", kib(per), mib(g.rssBefore), mib(g.rssIdle)), ok: per <= goalIdleBytes, judged: true})
	}
	if fo := g.fanout; fo != nil {
		cs = append(cs, liveCheck{
			goal: fmt.Sprintf("gRPC fan-out: each of %s subscribers gets every message in order at %g messages/s", thousands(int64(fo.subs)), lf.fanRate),
			measured: fmt.Sprintf("%s of %s subscribers; %s of %s deliveries; %s/s (p99 %s ms)", thousands(int64(fo.complete)), thousands(int64(fo.subs)),
				thousands(fo.deliveries), thousands(fo.expected), thousands(int64(fo.achieved())), ms(fo.stats.p99)),
			ok: fo.complete == fo.subs && fo.deliveries == fo.expected, judged: true})
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
	p("window, fed by the same polls; then %s gRPC subscribers, %d streams per HTTP/2 connection.", thousands(int64(lf.fanSubs)), lf.fanPerConn)
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
	if fo := g.fanout; fo != nil {
		p("gRPC fan-out: %s subscribers on %s connections, %d messages at %.1f/s: %s complete and in order, %s of %s",
			thousands(int64(fo.subs)), thousands(int64(fo.conns)), len(fo.written), actualRate(fo.written),
			thousands(int64(fo.complete)), thousands(fo.deliveries), thousands(fo.expected))
		p("deliveries, %s/s (offered %s/s); latency p50 %s ms, p90 %s ms, p99 %s ms, max %s ms; the service's CPU %.1f s",
			thousands(int64(fo.achieved())), thousands(int64(fo.offered())), ms(fo.stats.p50), ms(fo.stats.p90), ms(fo.stats.p99),
			ms(fo.stats.max), fo.serviceCPU)
		p("over %.1f s (%.0f %% of a core), RSS %s MiB; %.3f poll statements/s in that window.", fo.window.Seconds(),
			fo.serviceCPU/fo.window.Seconds()*100, mib(fo.rss), g.polls.pollsPerSec())
		for _, pr := range fo.problems {
			p("- %s", pr)
		}
		p("")
	}
}
