package tests

import (
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
)

// TestGRPCAndGraphQLOnePollPerInterval: the two subscribing faces share
// one poller. With one gRPC subscriber, then with thirty across gRPC,
// Connect, gRPC-Web and the GraphQL WebSocket on the same two topics, the
// poll statements a second (mirrorql_live_poll_duration_seconds: one a
// poll) stay as they were, and every subscriber of either face gets every
// message written meanwhile, in order.
func TestGRPCAndGraphQLOnePollPerInterval(t *testing.T) {
	t.Parallel()
	const interval = 100 * time.Millisecond
	srv, addr, b := grpcServer(t, "MIRRORQL_LIVE_POLL_INTERVAL="+interval.String(), "MIRRORQL_DB_LAYOUT_REFRESH=1h")
	// settle waits out the polls a new subscription asks for out of turn
	// (its hand-off wakes the poller until a cycle that began after it
	// registered has ended): the one under way, that cycle, and one more
	// for a wake sent before it ended. From then on every poll is the
	// interval's. It returns one poll's period as measured.
	settle := func() time.Duration {
		const polls = 3
		return polled(t, srv, polls) / polls
	}
	// polls counts the poller's polls while writes rows, one by one,
	// spread over a window of twenty periods as just measured (the same
	// number of polls however loaded the machine), and returns them with
	// the window as it was measured: the span the count can fall in
	// starts before the first scrape and ends after the last.
	polls := func(period time.Duration, rows ...liveRow) (float64, time.Duration) {
		t.Helper()
		window := 20 * period
		start := time.Now()
		before := metricValue(t, srv.URL, "mirrorql_live_poll_duration_seconds", nil)
		for i, r := range rows {
			time.Sleep(time.Until(start.Add(window * time.Duration(i) / time.Duration(len(rows)))))
			appendMessages(t, b, r)
		}
		time.Sleep(time.Until(start.Add(window)))
		got := metricValue(t, srv.URL, "mirrorql_live_poll_duration_seconds", nil) - before
		return got, time.Since(start)
	}
	// most is the polls a window can hold at one an interval: the timer is
	// reset after each poll, so polls that ended within it are at least an
	// interval apart, and the first may end at its start.
	most := func(window time.Duration) float64 { return float64(window/interval) + 1 }

	// One subscriber.
	first := grpcGo(grpcConn(t, addr))(t, topicQuery(501))
	waitSubscribed(t, srv, 1)
	alone, aloneWindow := polls(settle(), liveRow{Topic: 501}, liveRow{Topic: 501}, liveRow{Topic: 501})
	consecutiveTopic(t, "alone", takeTopic(t, first, 3, patience), 6)

	// Thirty more on both faces, both topics: gRPC-go over two HTTP/2
	// connections (ten streams each is the cap), Connect and gRPC-Web on
	// the main listener, GraphQL over two WebSockets.
	grpcStreams := map[string]<-chan topicEvent{}
	wsStreams := map[string]<-chan liveEvent{}
	topics := []int64{501, 502}
	for c := 0; c < 2; c++ {
		sub := grpcGo(grpcConn(t, addr))
		for i := 0; i < 8; i++ {
			topic := topics[i%2]
			grpcStreams[fmt.Sprintf("grpc %d.%d on %d", c, i, topic)] = sub(t, topicQuery(topic))
		}
	}
	for name, sub := range map[string]subscriber{"connect": connectGo(srv.URL), "grpc-web": connectGo(srv.URL, connect.WithGRPCWeb())} {
		for _, topic := range topics {
			grpcStreams[fmt.Sprintf("%s on %d", name, topic)] = sub(t, topicQuery(topic))
		}
	}
	for c := 0; c < 2; c++ {
		ws := openWS(t, srv.URL)
		for i := 0; i < 5; i++ {
			topic := topics[i%2]
			id := fmt.Sprintf("ws %d.%d on %d", c, i, topic)
			wsStreams[id] = ws.subscribe(id, subscriptionQuery(fmt.Sprintf(`topicId: "0.0.%d"`, topic)))
		}
	}
	subs := 1 + len(grpcStreams) + len(wsStreams)
	waitSubscribed(t, srv, subs)
	var rows []liveRow
	for i := 0; i < 3; i++ {
		rows = append(rows, liveRow{Topic: 501}, liveRow{Topic: 502})
	}
	many, manyWindow := polls(settle(), rows...)
	t.Logf("polls: %.0f in %s with 1 subscriber, %.0f in %s with %d on both faces (interval %s)",
		alone, aloneWindow.Round(time.Millisecond), many, manyWindow.Round(time.Millisecond), subs, interval)
	// The interval sets the rate; more subscribers must not add polls: at
	// most one an interval, over the window as measured. The count with
	// one subscriber is no bound: on a loaded machine a poll's time adds to
	// the interval, and the two windows were loaded unequally.
	if many > most(manyWindow) || alone > most(aloneWindow) {
		t.Errorf("%.0f polls in %s with %d subscribers (at most %.0f), %.0f in %s with one (at most %.0f): more than one an interval (%s)",
			many, manyWindow, subs, most(manyWindow), alone, aloneWindow, most(aloneWindow), interval)
	}

	// Every message, in order, to every subscriber of either face.
	consecutiveTopic(t, "the first", takeTopic(t, first, 3, patience), 9)
	firstOf := map[int64]uint64{501: 9, 502: 1}
	for name, ch := range grpcStreams {
		var topic int64
		fmt.Sscanf(name[len(name)-3:], "%d", &topic)
		consecutiveTopic(t, name, takeTopic(t, ch, 3, patience), firstOf[topic])
	}
	for name, ch := range wsStreams {
		var topic int64
		fmt.Sscanf(name[len(name)-3:], "%d", &topic)
		consecutive(t, name, takeN(t, ch, 3, patience), int64(firstOf[topic]))
	}
}
