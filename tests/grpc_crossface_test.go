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
	const window = 1500 * time.Millisecond
	// settle is past the hub's safety check (a read of each new
	// subscription's topic 1 s after it turns live): from then on the only
	// statements are the poller's.
	const settle = 1300 * time.Millisecond
	// pollsPerSecond measures the poller over the window while writes
	// rows, one by one, spread over it.
	pollsPerSecond := func(rows ...liveRow) float64 {
		t.Helper()
		polls := metricValue(t, srv.URL, "mirrorql_live_poll_duration_seconds", nil)
		start := time.Now()
		for i, r := range rows {
			time.Sleep(time.Until(start.Add(window * time.Duration(i) / time.Duration(len(rows)))))
			appendMessages(t, b, r)
		}
		time.Sleep(time.Until(start.Add(window)))
		got := metricValue(t, srv.URL, "mirrorql_live_poll_duration_seconds", nil) - polls
		return got / time.Since(start).Seconds()
	}

	// One subscriber.
	first := grpcGo(grpcConn(t, addr))(t, topicQuery(501))
	waitSubscribed(t, srv, 1)
	time.Sleep(settle)
	alone := pollsPerSecond(liveRow{Topic: 501}, liveRow{Topic: 501}, liveRow{Topic: 501})
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
	time.Sleep(settle)
	var rows []liveRow
	for i := 0; i < 3; i++ {
		rows = append(rows, liveRow{Topic: 501}, liveRow{Topic: 502})
	}
	many := pollsPerSecond(rows...)
	t.Logf("poll statements a second: %.2f with 1 subscriber, %.2f with %d on both faces (interval %s)", alone, many, subs, interval)
	// The interval sets the rate; more subscribers must not add polls: at
	// most one an interval (and one more at the window's edge), over the
	// window as measured. The rate with one subscriber is no bound: on a
	// loaded machine a poll's time adds to the interval, and the two
	// windows were loaded unequally.
	if limit := 1/interval.Seconds() + 1/window.Seconds(); many > limit || alone > limit {
		t.Errorf("%.2f poll statements a second with %d subscribers, %.2f with one: more than one an interval (%s)", many, subs, alone, interval)
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
