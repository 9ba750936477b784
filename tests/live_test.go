package tests

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/uptrace/bun"

	"mirrorql/tests/testdb"
)

// liveServer is a database with topics 0.0.501 … 0.0.509 (501 holding five
// messages from a minute ago) and a server over it.
func liveServer(t *testing.T, env ...string) (*server, *bun.DB) {
	t.Helper()
	dbURL, b := testdb.New(t)
	liveTopic(t, b, 501, 502, 503, 504, 505, 506, 507, 508, 509)
	base := time.Now().Add(-time.Minute).UnixNano()
	for i := int64(0); i < 5; i++ {
		appendMessages(t, b, liveRow{Topic: 501, Ts: base + i*1000})
	}
	return startServer(t, dbURL, env...), b
}

func TestLiveHistoryThenLive(t *testing.T) {
	t.Parallel()
	for _, face := range []string{"websocket", "sse"} {
		t.Run(face, func(t *testing.T) {
			t.Parallel()
			srv, b := liveServer(t) // a server each: the subscription count below is this face's alone
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var from0, fromNow <-chan liveEvent
			if face == "websocket" {
				c := openWS(t, srv.URL)
				from0 = c.subscribe("a", subscriptionQuery(`topicId: "0.0.501", consensusStartTime: "0"`))
				fromNow = c.subscribe("b", subscriptionQuery(`topicId: "0.0.501"`))
			} else {
				from0 = sseSubscribe(ctx, t, srv.URL, subscriptionQuery(`topicId: "0.0.501", consensusStartTime: "0"`))
				fromNow = sseSubscribe(ctx, t, srv.URL, subscriptionQuery(`topicId: "0.0.501"`))
			}
			// "now" is when the server takes the subscription: append only
			// after both are followed, or the first may precede fromNow's start.
			waitSubscribed(t, srv, 2)
			var first int64
			if err := b.NewRaw("SELECT max(sequence_number) FROM topic_message WHERE topic_id = 501").Scan(ctx, &first); err != nil {
				t.Fatal(err)
			}
			history := takeN(t, from0, int(first), patience)
			consecutive(t, "history", history, 1)
			// one at a time, then three in one transaction
			appendMessages(t, b, liveRow{Topic: 501})
			appendMessages(t, b, liveRow{Topic: 501}, liveRow{Topic: 501}, liveRow{Topic: 501})
			live := takeN(t, from0, 4, patience)
			consecutive(t, "live after history", live, first+1)
			onlyNew := takeN(t, fromNow, 4, patience)
			consecutive(t, "from now", onlyNew, first+1)
			if live[0].Message != fmt.Sprintf("message %d of topic 501", first+1) {
				t.Errorf("message text %q", live[0].Message)
			}
		})
	}
}

func TestLiveSameMillisecondAndLateGap(t *testing.T) {
	t.Parallel()
	srv, b := liveServer(t)
	c := openWS(t, srv.URL)
	ch := c.subscribe("1", subscriptionQuery(`topicId: "0.0.502"`))
	waitSubscribed(t, srv, 1)

	// Three messages within one millisecond.
	ms := time.Now().UnixNano() / 1e6 * 1e6
	appendMessages(t, b, liveRow{Topic: 502, Seq: 1, Ts: ms + 1}, liveRow{Topic: 502, Seq: 2, Ts: ms + 2}, liveRow{Topic: 502, Seq: 3, Ts: ms + 3})
	consecutive(t, "same millisecond", takeN(t, ch, 3, patience), 1)

	// Sequence number 5 is committed before 4, whose consensus time is
	// earlier: the poller has moved past 4's time when it arrives.
	now := time.Now().UnixNano()
	appendMessages(t, b, liveRow{Topic: 502, Seq: 5, Ts: now + 2000})
	// The poller must have seen 5 first: wait until a poll that began after
	// 5's commit has been processed. Polls run one after another, so of the
	// polls counted from now, the second began after the commit and is
	// processed once the third has ended.
	polled(t, srv, 3)
	appendMessages(t, b, liveRow{Topic: 502, Seq: 4, Ts: now + 1000})
	consecutive(t, "late gap", takeN(t, ch, 2, patience), 4)
}

func TestLiveLimitAndEndTime(t *testing.T) {
	t.Parallel()
	srv, b := liveServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// limit: three of the five historical messages, then complete
	msgs, last, ended := collect(t, sseSubscribe(ctx, t, srv.URL, subscriptionQuery(`topicId: "0.0.501", consensusStartTime: "0", limit: 3`)), patience)
	if !ended || !last.Complete || len(msgs) != 3 {
		t.Fatalf("limit 3: %d messages, last %+v, ended %v", len(msgs), last, ended)
	}
	consecutive(t, "limit", msgs, 1)

	// an end time in the past: the history before it, then complete
	var ts3 string
	if err := b.NewRaw("SELECT consensus_timestamp::text FROM topic_message WHERE topic_id = 501 AND sequence_number = 3").Scan(ctx, &ts3); err != nil {
		t.Fatal(err)
	}
	end := ts3[:len(ts3)-9] + "." + ts3[len(ts3)-9:]
	msgs, last, ended = collect(t, sseSubscribe(ctx, t, srv.URL, subscriptionQuery(`topicId: "0.0.501", consensusStartTime: "0", consensusEndTime: "`+end+`"`)), patience)
	if !ended || !last.Complete || len(msgs) != 2 {
		t.Fatalf("end before message 3: %d messages, last %+v", len(msgs), last)
	}

	// an end time ahead: live messages before it, then the ledger moves
	// past it and the stream completes at once, not when the hub's end
	// grace (live.Options.EndGrace, 30 s) has passed: the grace is what
	// completes a stream whose ledger does not move, so a completion
	// before it can only be the ledger's doing, however slow the machine.
	// What must fit before the end time (a WebSocket subscription taken,
	// a message committed and received) is timed first, the same steps
	// without an end time on another topic; the end time leaves ten times
	// that.
	began := time.Now()
	warm := openWS(t, srv.URL)
	wch := warm.subscribe("w", subscriptionQuery(`topicId: "0.0.505"`))
	waitSubscribed(t, srv, 1)
	appendMessages(t, b, liveRow{Topic: 505})
	takeN(t, wch, 1, patience)
	pace := time.Since(began)
	warm.Close()
	waitSubscribed(t, srv, 0)
	endAt := time.Now().Add(10 * pace)
	t.Logf("subscribing and a message took %s: the end time is %s ahead", pace.Round(time.Millisecond), (10 * pace).Round(time.Millisecond))
	c := openWS(t, srv.URL)
	ch := c.subscribe("e", subscriptionQuery(fmt.Sprintf(`topicId: "0.0.503", consensusEndTime: "%d.%09d"`, endAt.Unix(), endAt.Nanosecond())))
	waitSubscribed(t, srv, 1)
	appendMessages(t, b, liveRow{Topic: 503})
	consecutive(t, "before the end", takeN(t, ch, 1, patience), 1)
	// The condition waited for is the wall clock passing the end time.
	time.Sleep(time.Until(endAt))
	appendMessages(t, b, liveRow{Topic: 504}) // another topic: the ledger moves
	start := time.Now()
	msgs, last, ended = collect(t, ch, patience)
	if !ended || !last.Complete || len(msgs) != 0 {
		t.Fatalf("after the end: %d messages, last %+v, ended %v", len(msgs), last, ended)
	}
	took := time.Since(start)
	t.Logf("completed %s after the ledger passed the end time", took.Round(time.Millisecond))
	if endGrace := 30 * time.Second; took >= endGrace {
		t.Errorf("completed %s after the ledger passed the end time: by the end grace (%s), not the ledger", took, endGrace)
	}
}

func TestLiveValidation(t *testing.T) {
	t.Parallel()
	srv, b := liveServer(t)
	if _, err := b.ExecContext(context.Background(), `INSERT INTO entity (id, num, realm, shard, type, timestamp_range)
		VALUES (1002, 1002, 0, 0, 'ACCOUNT', int8range(1, null))`); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour).Unix()
	cases := []struct{ args, code, message string }{
		{`topicId: "0.0.501", limit: -1`, "BAD_USER_INPUT", "limit must be greater than or equal to 0"},
		{fmt.Sprintf(`topicId: "0.0.501", consensusStartTime: "%d"`, future), "BAD_USER_INPUT", "Start time must be before the current time"},
		{`topicId: "0.0.501", consensusStartTime: "100", consensusEndTime: "100"`, "BAD_USER_INPUT", "End time must be after start time"},
		{`topicId: "0.0.501", consensusStartTime: "100", consensusEndTime: "99.9"`, "BAD_USER_INPUT", "End time must be after start time"},
		{`topicId: "x.0.501"`, "BAD_USER_INPUT", "Invalid parameter: topic.id"},
		{`topicId: "0.0.501", consensusStartTime: "abc"`, "BAD_USER_INPUT", "Invalid parameter: consensusStartTime"},
		{`topicId: "0.0.501", consensusEndTime: "1.0000000001"`, "BAD_USER_INPUT", "Invalid parameter: consensusEndTime"},
		{`topicId: "0.0.501", limit: "ten"`, "BAD_USER_INPUT", "Invalid parameter: limit"},
		{`topicId: "0.0.9999"`, "NOT_FOUND", "0.0.9999 does not exist"},
		{`topicId: "0.0.1002"`, "BAD_USER_INPUT", "Not a valid topic"},
	}
	c := openWS(t, srv.URL)
	for i, tc := range cases {
		for _, face := range []string{"websocket", "sse"} {
			var ch <-chan liveEvent
			if face == "websocket" {
				ch = c.subscribe(fmt.Sprint(i), subscriptionQuery(tc.args))
			} else {
				ch = sseSubscribe(context.Background(), t, srv.URL, subscriptionQuery(tc.args))
			}
			var errs []liveError
			for ev := range ch {
				if ev.Data != nil && string(ev.Data) != "null" {
					t.Errorf("%s %s: data %s before the error", face, tc.args, ev.Data)
				}
				errs = append(errs, ev.Errors...)
			}
			if len(errs) != 1 || errs[0].Message != tc.message || errs[0].Code() != tc.code {
				t.Errorf("%s %s: %+v, want %s %q", face, tc.args, errs, tc.code, tc.message)
			}
		}
	}

	// Plain POST and GET cannot subscribe: an error, not a hang.
	status, body := postGraphQL(t, srv.URL, `{"query":"subscription { topicMessages(topicId: \"0.0.501\") { sequenceNumber } }"}`)
	if status != 200 || !strings.Contains(string(body), "STREAM_TRANSPORT_REQUIRED") {
		t.Errorf("POST: %d %s", status, body)
	}
}

func TestLiveCaps(t *testing.T) {
	t.Parallel()
	srv, _ := liveServer(t, "MIRRORQL_LIVE_MAX_SUBSCRIPTIONS=3", "MIRRORQL_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION=2")
	c := openWS(t, srv.URL)
	c.subscribe("a", subscriptionQuery(`topicId: "0.0.501"`))
	c.subscribe("b", subscriptionQuery(`topicId: "0.0.502"`))
	waitSubscribed(t, srv, 2)
	_, last, _ := collect(t, c.subscribe("c", subscriptionQuery(`topicId: "0.0.503"`)), patience)
	if len(last.Errors) != 1 || last.Errors[0].Code() != "TOO_MANY_SUBSCRIPTIONS" {
		t.Fatalf("third on one connection: %+v", last)
	}
	d := openWS(t, srv.URL)
	d.subscribe("a", subscriptionQuery(`topicId: "0.0.504"`))
	waitSubscribed(t, srv, 3)
	_, last, _ = collect(t, d.subscribe("b", subscriptionQuery(`topicId: "0.0.505"`)), patience)
	if len(last.Errors) != 1 || last.Errors[0].Code() != "TOO_MANY_SUBSCRIPTIONS" {
		t.Fatalf("fourth in the process: %+v", last)
	}
	// the refused ones did not drop their connections, and a stopped one
	// frees its place (the server sends nothing more on a stopped
	// operation: its count is what tells)
	c.stop("a")
	waitSubscribed(t, srv, 2)
	e := d.subscribe("c", subscriptionQuery(`topicId: "0.0.505"`))
	waitSubscribed(t, srv, 3)
	select {
	case ev := <-e:
		t.Fatalf("after a place was freed: %+v", ev)
	default:
	}
}

func TestLiveLegacyProtocolAndKeepAlive(t *testing.T) {
	t.Parallel()
	srv, b := liveServer(t, "MIRRORQL_LIVE_KEEPALIVE=1s")
	c, err := dialWS(t, srv.URL, "graphql-ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.subscribe("1", subscriptionQuery(`topicId: "0.0.501", consensusStartTime: "0", limit: 7`))
	consecutive(t, "history", takeN(t, ch, 5, patience), 1)
	appendMessages(t, b, liveRow{Topic: 501}, liveRow{Topic: 501})
	msgs, last, ended := collect(t, ch, patience)
	if len(msgs) != 2 || !ended || !last.Complete {
		t.Fatalf("legacy protocol: %d messages, %+v", len(msgs), last)
	}
	// keep-alive: `ka` (legacy) and `ping` (graphql-transport-ws) while
	// idle. What is tested is that they come, two of each (one could be a
	// greeting); how soon depends on the machine, so the wait is only
	// bounded against a hang.
	w := openWS(t, srv.URL)
	w.subscribe("idle", subscriptionQuery(`topicId: "0.0.506"`))
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) && (countType(c, "ka") < 2 || countType(w, "ping") < 2) {
		time.Sleep(20 * time.Millisecond)
	}
	if countType(c, "ka") < 2 || countType(w, "ping") < 2 {
		t.Errorf("keep-alive at 1 s, after %s: %d ka, %d ping", patience, countType(c, "ka"), countType(w, "ping"))
	}
	// SSE comments; the request's context ends a read that would hang
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"subscription { topicMessages(topicId: \"0.0.507\") { sequenceNumber } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 256)
	tmp := make([]byte, 64)
	for strings.Count(string(buf), ": ping") < 2 {
		n, err := resp.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			break
		}
	}
	if strings.Count(string(buf), ": ping") < 2 {
		t.Errorf("SSE keep-alive: %q", buf)
	}
}

func countType(c *wsClient, typ string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.other {
		if m["type"] == typ {
			n++
		}
	}
	return n
}

func TestLiveDisabled(t *testing.T) {
	t.Parallel()
	srv, _ := liveServer(t, "MIRRORQL_LIVE_ENABLED=false")
	_, last, _ := collect(t, openWS(t, srv.URL).subscribe("1", subscriptionQuery(`topicId: "0.0.501"`)), patience)
	if len(last.Errors) != 1 || last.Errors[0].Code() != "SUBSCRIPTIONS_DISABLED" {
		t.Fatalf("disabled: %+v", last)
	}
}

func TestLiveNestedFields(t *testing.T) {
	t.Parallel()
	srv, b := liveServer(t)
	c := openWS(t, srv.URL)
	ch := c.subscribe("1", `subscription { topicMessages(topicId: "0.0.501", consensusStartTime: "0", limit: 2) {
		sequenceNumber topic { id memo } chunks { sequenceNumber } fullMessage(encoding: UTF8) chunkInfo { number } } }`)
	_ = b
	var got []string
	for ev := range ch {
		if len(ev.Errors) > 0 {
			t.Fatalf("errors: %+v", ev.Errors)
		}
		if !ev.Complete {
			got = append(got, string(ev.Data))
		}
	}
	want := `{"topicMessages":{"sequenceNumber":1,"topic":{"id":"0.0.501","memo":"live"},"chunks":null,"fullMessage":"message 1 of topic 501","chunkInfo":null}}`
	if len(got) != 2 || got[0] != want {
		t.Fatalf("nested fields: %v\nwant first %s", got, want)
	}
	// a query over the WebSocket answers as over POST
	q := c.subscribe("q", `{ topic(id: "0.0.501") { memo } }`)
	ev := <-q
	if string(ev.Data) != `{"topic":{"memo":"live"}}` {
		t.Errorf("query over websocket: %+v", ev)
	}
	status, body := postGraphQL(t, srv.URL, `{"query":"{ topic(id: \"0.0.501\") { memo } }"}`)
	if status != 200 || string(body) != `{"data":{"topic":{"memo":"live"}}}` {
		t.Errorf("POST: %d %s", status, body)
	}
}

// waitSubscribed waits until the server has n open subscriptions.
func waitSubscribed(t testing.TB, srv *server, n int) {
	t.Helper()
	deadline := time.Now().Add(patience)
	var got float64
	for time.Now().Before(deadline) {
		mf := scrape(t.(*testing.T), srv.URL)
		if m := sample(mf, "mirrorql_live_subscriptions", nil); m != nil {
			if got = value(m); int(got) == n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%v open subscriptions, want %d", got, n)
}

// A WebSocket that never sends connection_init is closed once the init
// timeout passes, as graphql-transport-ws asks.
func TestLiveInitTimeout(t *testing.T) {
	t.Parallel()
	srv, _ := liveServer(t, "MIRRORQL_GRAPHQL_WS_INIT_TIMEOUT=1s")
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	// The server's timer starts once it has the connection, after the dial
	// began: from here, the close cannot come before the timeout however
	// late this goroutine runs.
	start := time.Now()
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	var closeErr *websocket.CloseError
	for {
		if _, _, err = conn.ReadMessage(); err != nil {
			break
		}
	}
	took := time.Since(start)
	// Not sooner than the 1 s asked for, and sooner than the default
	// (config's MIRRORQL_GRAPHQL_WS_INIT_TIMEOUT, 10 s), which is what a
	// setting the server did not read would give: that bound sets the two
	// apart on a machine however loaded, as one near 1 s would not.
	const unset = 10 * time.Second
	if !errors.As(err, &closeErr) || took < time.Second || took >= unset {
		t.Fatalf("after %s: %v, want a close frame after 1 s (and before the default %s)", took, err, unset)
	}
	t.Logf("closed after %s: %d %q", took.Round(time.Millisecond), closeErr.Code, closeErr.Text)
}
