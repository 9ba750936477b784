package tests

import (
	"bytes"
	"context"
	binenc "encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/hashgraph/hedera-sdk-go/v2/proto/mirror"
	"github.com/hashgraph/hedera-sdk-go/v2/proto/services"
	"github.com/uptrace/bun"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"mirrorql/tests/testdb"
)

// The SDKs' face end to end: the built binary's ConsensusService over gRPC
// (grpc-go on MIRRORQL_GRPC_LISTEN), Connect and gRPC-Web (connect-go's
// client on the main listener). The messages are the Go SDK's generated
// ones, not the service's: what is compared is the wire.

const subscribeTopic = "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic"

// grpcServer is liveServer with a gRPC listener of its own; it returns the
// server, its gRPC address and the writer pool.
func grpcServer(t *testing.T, env ...string) (*server, string, *bun.DB) {
	t.Helper()
	dbURL, b := testdb.New(t)
	liveTopic(t, b, 501, 502, 503, 504, 505)
	base := time.Now().Add(-time.Minute).UnixNano()
	for i := int64(0); i < 5; i++ {
		appendMessages(t, b, liveRow{Topic: 501, Ts: base + i*1000})
	}
	addr := freeAddr(t)
	return startServer(t, dbURL, append([]string{"MIRRORQL_GRPC_LISTEN=" + addr}, env...)...), addr, b
}

// grpcConn is a grpc-go connection to addr, plaintext HTTP/2.
func grpcConn(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// topicEvent is one response of a stream, or its end (Err: its status; nil
// for OK).
type topicEvent struct {
	Msg  *mirror.ConsensusTopicResponse
	End  bool
	Code codes.Code
	Err  string
}

// subscriber opens subscribeTopic with q on one client and returns its
// events; the stream is cancelled at the test's end.
type subscriber func(t testing.TB, q *mirror.ConsensusTopicQuery) <-chan topicEvent

// grpcGo subscribes with grpc-go's client on cc.
func grpcGo(cc *grpc.ClientConn) subscriber {
	return func(t testing.TB, q *mirror.ConsensusTopicQuery) <-chan topicEvent {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		stream, err := mirror.NewConsensusServiceClient(cc).SubscribeTopic(ctx, q)
		out := make(chan topicEvent, 1024)
		go func() {
			defer close(out)
			for err == nil {
				var m *mirror.ConsensusTopicResponse
				if m, err = stream.Recv(); err == nil {
					out <- topicEvent{Msg: m}
				}
			}
			if errors.Is(err, io.EOF) {
				out <- topicEvent{End: true, Code: codes.OK}
				return
			}
			st := status.Convert(err)
			out <- topicEvent{End: true, Code: st.Code(), Err: st.Message()}
		}()
		return out
	}
}

// connectGo subscribes with connect-go's client at base (the main
// listener) in the protocol opts choose (Connect by default, gRPC-Web).
func connectGo(base string, opts ...connect.ClientOption) subscriber {
	return func(t testing.TB, q *mirror.ConsensusTopicQuery) <-chan topicEvent {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		c := connect.NewClient[mirror.ConsensusTopicQuery, mirror.ConsensusTopicResponse](http.DefaultClient, base+subscribeTopic, opts...)
		out := make(chan topicEvent, 1024)
		go func() {
			defer close(out)
			stream, err := c.CallServerStream(ctx, connect.NewRequest(q))
			if err == nil {
				for stream.Receive() {
					out <- topicEvent{Msg: stream.Msg()}
				}
				err = stream.Err()
				_ = stream.Close()
			}
			if err == nil {
				out <- topicEvent{End: true, Code: codes.OK}
				return
			}
			out <- topicEvent{End: true, Code: codes.Code(connect.CodeOf(err)), Err: connectMessage(err)}
		}()
		return out
	}
}

func connectMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

// clients are the three protocols: grpc-go on the gRPC listener, Connect
// and gRPC-Web on the main one.
func clients(t *testing.T, srv *server, addr string) map[string]subscriber {
	return map[string]subscriber{
		"grpc":     grpcGo(grpcConn(t, addr)),
		"connect":  connectGo(srv.URL),
		"grpc-web": connectGo(srv.URL, connect.WithGRPCWeb()),
	}
}

func topicQuery(num int64) *mirror.ConsensusTopicQuery {
	return &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: num}}
}

func fromEpoch(q *mirror.ConsensusTopicQuery) *mirror.ConsensusTopicQuery {
	q.ConsensusStartTime = &services.Timestamp{}
	return q
}

// takeTopic takes n responses from ch within d, failing on an early end.
func takeTopic(t testing.TB, ch <-chan topicEvent, n int, within time.Duration) []*mirror.ConsensusTopicResponse {
	t.Helper()
	var out []*mirror.ConsensusTopicResponse
	deadline := time.After(within)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			if !ok || ev.End {
				t.Fatalf("the stream ended after %d of %d messages: %v %q", len(out), n, ev.Code, ev.Err)
			}
			out = append(out, ev.Msg)
		case <-deadline:
			t.Fatalf("%d of %d messages within %s", len(out), n, within)
		}
	}
	return out
}

// endOf waits for the end of ch, failing on a message.
func endOf(t testing.TB, ch <-chan topicEvent, within time.Duration) topicEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream closed without an end")
		}
		if !ev.End {
			t.Fatalf("a message where the end was expected: seq %d", ev.Msg.SequenceNumber)
		}
		return ev
	case <-time.After(within):
		t.Fatalf("no end within %s", within)
	}
	return topicEvent{}
}

func consecutiveTopic(t testing.TB, what string, msgs []*mirror.ConsensusTopicResponse, first uint64) {
	t.Helper()
	for i, m := range msgs {
		if m.SequenceNumber != first+uint64(i) {
			var got []uint64
			for _, m := range msgs {
				got = append(got, m.SequenceNumber)
			}
			t.Fatalf("%s: sequence numbers %v, want consecutive from %d", what, got, first)
		}
	}
}

// TestGRPCHistoryThenLive: on every protocol, a stream from epoch 0 gets the
// history and then the live messages, consecutive across the switch, and a
// stream without a start time only the live ones; each row as the mirror
// node renders it.
func TestGRPCHistoryThenLive(t *testing.T) {
	t.Parallel()
	srv, addr, b := grpcServer(t)
	all := clients(t, srv, addr)
	from0, fromNow := map[string]<-chan topicEvent{}, map[string]<-chan topicEvent{}
	for name, sub := range all {
		from0[name] = sub(t, fromEpoch(topicQuery(501)))
		fromNow[name] = sub(t, topicQuery(501))
	}
	waitSubscribed(t, srv, 2*len(all))
	for name := range all {
		consecutiveTopic(t, name+" history", takeTopic(t, from0[name], 5, patience), 1)
	}
	rows := appendMessages(t, b, liveRow{Topic: 501})
	rows = append(rows, appendMessages(t, b, liveRow{Topic: 501}, liveRow{Topic: 501}, liveRow{Topic: 501})...)
	for name := range all {
		live := takeTopic(t, from0[name], 4, patience)
		consecutiveTopic(t, name+" live", live, 6)
		now := takeTopic(t, fromNow[name], 4, patience)
		consecutiveTopic(t, name+" from now", now, 6)
		m, r := live[0], rows[0]
		want := &mirror.ConsensusTopicResponse{
			ConsensusTimestamp: &services.Timestamp{Seconds: r.Ts / 1e9, Nanos: int32(r.Ts % 1e9)},
			Message:            []byte(r.Text), RunningHash: bytes.Repeat([]byte{0xab}, 48),
			SequenceNumber: 6, RunningHashVersion: 3,
		}
		if !proto.Equal(m, want) {
			t.Errorf("%s: message 6 is\n%v\nwant\n%v", name, m, want)
		}
	}
}

// insertChunks writes a message of total chunks as the importer does: the
// protobuf initial transaction id (payer 0.0.1002, valid start validStart)
// on every chunk, each chunk whole in its INSERT and all in one database
// transaction.
func insertChunks(t testing.TB, b bun.IDB, topic int64, total int, validStart int64) []int64 {
	t.Helper()
	txID, err := proto.Marshal(&services.TransactionID{
		AccountID:             &services.AccountID{Account: &services.AccountID_AccountNum{AccountNum: 1002}},
		TransactionValidStart: &services.Timestamp{Seconds: validStart / 1e9, Nanos: int32(validStart % 1e9)},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]liveRow, total)
	for i := range rows {
		rows[i] = liveRow{Topic: topic, Text: fmt.Sprintf("part %d of %d;", i+1, total),
			Chunk: &liveChunk{Num: i + 1, Total: total, InitialTx: txID}}
	}
	var seqs []int64
	for _, r := range appendMessages(t, b, rows...) {
		seqs = append(seqs, r.Seq)
	}
	return seqs
}

// TestGRPCChunksLimitEnd: chunkInfo only on chunks, with the importer's
// initial transaction id; runningHashVersion 3 for a null column; a limit
// and an end time complete the stream with OK.
func TestGRPCChunksLimitEnd(t *testing.T) {
	t.Parallel()
	srv, addr, b := grpcServer(t)
	validStart := time.Now().Add(-time.Hour).UnixNano()
	insertChunks(t, b, 502, 3, validStart)
	for name, sub := range clients(t, srv, addr) {
		t.Run(name, func(t *testing.T) {
			msgs := takeTopic(t, sub(t, fromEpoch(topicQuery(502))), 3, patience)
			for i, m := range msgs {
				c := m.ChunkInfo
				if c == nil || c.Number != int32(i+1) || c.Total != 3 || m.RunningHashVersion != 3 ||
					c.InitialTransactionID.GetAccountID().GetAccountNum() != 1002 ||
					c.InitialTransactionID.GetTransactionValidStart().GetSeconds() != validStart/1e9 {
					t.Errorf("chunk %d: %v", i+1, m)
				}
			}
			history := takeTopic(t, sub(t, fromEpoch(topicQuery(501))), 1, patience)
			if history[0].ChunkInfo != nil {
				t.Errorf("chunkInfo on a whole message: %v", history[0])
			}

			q := fromEpoch(topicQuery(501))
			q.Limit = 3
			ch := sub(t, q)
			consecutiveTopic(t, "limit 3", takeTopic(t, ch, 3, patience), 1)
			if ev := endOf(t, ch, patience); ev.Code != codes.OK {
				t.Errorf("limit 3 ended %v %q, want OK", ev.Code, ev.Err)
			}

			// An end time right after message 2: two messages, then OK.
			var ts2 int64
			if err := b.NewRaw("SELECT consensus_timestamp FROM topic_message WHERE topic_id = 501 AND sequence_number = 2").Scan(context.Background(), &ts2); err != nil {
				t.Fatal(err)
			}
			q = fromEpoch(topicQuery(501))
			q.ConsensusEndTime = &services.Timestamp{Seconds: (ts2 + 1) / 1e9, Nanos: int32((ts2 + 1) % 1e9)}
			ch = sub(t, q)
			consecutiveTopic(t, "end time", takeTopic(t, ch, 2, patience), 1)
			if ev := endOf(t, ch, patience); ev.Code != codes.OK {
				t.Errorf("end time ended %v %q, want OK", ev.Code, ev.Err)
			}
		})
	}
}

// TestGRPCValidation: the mirror node's checks and statuses, on every
// protocol.
func TestGRPCValidation(t *testing.T) {
	t.Parallel()
	srv, addr, b := grpcServer(t)
	if _, err := b.ExecContext(context.Background(), `INSERT INTO entity (id, num, realm, shard, type, memo, timestamp_range)
		VALUES (98, 98, 0, 0, 'ACCOUNT', '', int8range(1, null))`); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	cases := []struct {
		name string
		q    *mirror.ConsensusTopicQuery
		code codes.Code
		msg  string
	}{
		{"no topic", &mirror.ConsensusTopicQuery{}, codes.InvalidArgument, "topicId: must not be null"},
		{"shard out of range", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{ShardNum: 1024, TopicNum: 5}},
			codes.InvalidArgument, `Invalid entity ID "1024.0.5"`},
		{"negative num", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: -1}},
			codes.InvalidArgument, `Invalid entity ID "0.0.-1"`},
		{"num out of range", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: 1 << 38}},
			codes.InvalidArgument, `Invalid entity ID "0.0.274877906944"`},
		{"no such topic", topicQuery(9999), codes.NotFound, "0.0.9999 does not exist"},
		{"not a topic", topicQuery(98), codes.InvalidArgument, "Not a valid topic"},
		{"start in the future", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: 501},
			ConsensusStartTime: &services.Timestamp{Seconds: future.Unix()}},
			codes.InvalidArgument, "Start time must be before the current time"},
		{"end before start", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: 501},
			ConsensusStartTime: &services.Timestamp{Seconds: 100}, ConsensusEndTime: &services.Timestamp{Seconds: 50}},
			codes.InvalidArgument, "End time must be after start time"},
		{"end at start", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: 501},
			ConsensusStartTime: &services.Timestamp{Seconds: 100}, ConsensusEndTime: &services.Timestamp{Seconds: 100}},
			codes.InvalidArgument, "End time must be after start time"},
		{"limit past 2^63", &mirror.ConsensusTopicQuery{TopicID: &services.TopicID{TopicNum: 501}, Limit: math.MaxUint64},
			codes.InvalidArgument, "limit must be greater than or equal to 0"},
	}
	for name, sub := range clients(t, srv, addr) {
		for _, c := range cases {
			ev := endOf(t, sub(t, c.q), patience)
			if ev.Code != c.code || ev.Err != c.msg {
				t.Errorf("%s, %s: %v %q, want %v %q", name, c.name, ev.Code, ev.Err, c.code, c.msg)
			}
		}
	}
}

// h2c is an HTTP client that speaks HTTP/2 without TLS (gRPC's wire).
func h2c() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}, Timeout: patience} // a whole call, streams too: a hang's bound only
}

// grpcFrame is body framed as one gRPC message.
func grpcFrame(body []byte) []byte {
	out := make([]byte, 5, 5+len(body))
	binenc.BigEndian.PutUint32(out[1:], uint32(len(body)))
	return append(out, body...)
}

// TestGRPCBadInput: malformed and oversized messages, an unknown method, a
// wrong content type, the address book: a status each, and the server
// answers on.
func TestGRPCBadInput(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t)
	client := h2c()
	post := func(base, path, contentType string, body []byte) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("TE", "trailers")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	grpcStatus := func(resp *http.Response) (string, string) {
		s := resp.Trailer.Get("Grpc-Status")
		if s == "" {
			s = resp.Header.Get("Grpc-Status")
		}
		m := resp.Trailer.Get("Grpc-Message")
		if m == "" {
			m = resp.Header.Get("Grpc-Message")
		}
		return s, m
	}
	for _, base := range []string{"http://" + addr, srv.URL} {
		cases := []struct {
			name, path, contentType string
			body                    []byte
			status                  string // gRPC status code
		}{
			{"malformed message", subscribeTopic, "application/grpc", grpcFrame([]byte{0x0a, 0xff, 0xff}), "3"},
			// connect calls a frame shorter than it says a protocol error
			{"truncated frame", subscribeTopic, "application/grpc", []byte{0, 0, 0, 0, 9, 1}, "13"},
			{"oversized message", subscribeTopic, "application/grpc", grpcFrame(make([]byte, 70<<10)), "8"},
			{"unknown method", "/com.hedera.mirror.api.proto.ConsensusService/nope", "application/grpc", grpcFrame(nil), "12"},
			{"unknown service", "/no.such.Service/call", "application/grpc", grpcFrame(nil), "12"},
			{"address book", "/com.hedera.mirror.api.proto.NetworkService/getNodes", "application/grpc", grpcFrame(nil), "12"},
			{"grpc-web unknown method", "/com.hedera.mirror.api.proto.ConsensusService/nope", "application/grpc-web+proto", grpcFrame(nil), "12"},
		}
		for _, c := range cases {
			resp, _ := post(base, c.path, c.contentType, c.body)
			code, msg := grpcStatus(resp)
			if resp.StatusCode != http.StatusOK || code != c.status || msg == "" {
				t.Errorf("%s %s: HTTP %d, grpc-status %q %q, want %s with a message", base, c.name, resp.StatusCode, code, msg, c.status)
			}
			if c.name == "address book" && !strings.Contains(msg, "not served") {
				t.Errorf("getNodes says %q", msg)
			}
		}
		resp, body := post(base, subscribeTopic, "text/plain", []byte("hello"))
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("%s text/plain: HTTP %d %s, want 415", base, resp.StatusCode, body)
		}
	}
	// A Connect unary call of a streaming method, and a GET: 4xx, no panic.
	resp, _ := post(srv.URL, subscribeTopic, "application/json", []byte(`{}`))
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("a unary Connect call of a stream: HTTP %d", resp.StatusCode)
	}
	// Still serving, and nothing panicked.
	ch := grpcGo(grpcConn(t, addr))(t, fromEpoch(topicQuery(501)))
	takeTopic(t, ch, 5, patience)
	if logs := srv.logs.String(); strings.Contains(logs, "panic") {
		t.Errorf("the server logged a panic:\n%s", logs)
	}
}

// TestGRPCHealthAndReflection: the standard services answer on both
// listeners, so grpcurl and load-balancer probes work without the .proto
// files.
func TestGRPCHealthAndReflection(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t)
	for _, base := range []string{"http://" + addr, srv.URL} {
		health := grpchealth.NewClient(h2c(), base, connect.WithGRPC())
		resp, err := health.Check(context.Background(), &grpchealth.CheckRequest{})
		if err != nil || resp.Status != grpchealth.StatusServing {
			t.Errorf("%s health: %v %v", base, resp, err)
		}
		rc := grpcreflect.NewClient(h2c(), base, connect.WithGRPC())
		stream := rc.NewStream(context.Background())
		names, err := stream.ListServices()
		if err != nil {
			t.Fatalf("%s reflection: %v", base, err)
		}
		var list []string
		for _, n := range names {
			list = append(list, string(n))
		}
		if !strings.Contains(strings.Join(list, " "), "com.hedera.mirror.api.proto.ConsensusService") {
			t.Errorf("%s reflection lists %v", base, list)
		}
		files, err := stream.FileContainingSymbol("com.hedera.mirror.api.proto.ConsensusTopicQuery")
		if err != nil || len(files) == 0 {
			t.Errorf("%s reflection of the query: %v", base, err)
		}
		_, _ = stream.Close()
	}
}

// TestGRPCDatabaseOutage: the database goes away for 5 s under a gRPC and a
// gRPC-Web subscriber; what was committed before and after reaches both,
// in order, and neither stream ends.
func TestGRPCDatabaseOutage(t *testing.T) {
	t.Parallel()
	const topic = 611
	cluster, w := liveCluster(t, topic)
	addr := freeAddr(t)
	srv := startServer(t, cluster.URL(), "MIRRORQL_GRPC_LISTEN="+addr)
	streams := map[string]<-chan topicEvent{
		"grpc":     grpcGo(grpcConn(t, addr))(t, topicQuery(topic)),
		"grpc-web": connectGo(srv.URL, connect.WithGRPCWeb())(t, topicQuery(topic)),
	}
	waitSubscribed(t, srv, 2)
	got := map[string][]*mirror.ConsensusTopicResponse{}
	take := func(n int, within time.Duration) {
		t.Helper()
		for name, ch := range streams {
			got[name] = append(got[name], takeTopic(t, ch, n, within)...)
		}
	}
	appendMessages(t, w, liveRow{Topic: topic}, liveRow{Topic: topic})
	take(2, patience)
	appendMessages(t, w, liveRow{Topic: topic})
	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := cluster.StartServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	w = openWriter(t, cluster.URL())
	appendMessages(t, w, liveRow{Topic: topic}, liveRow{Topic: topic})
	take(3, patience)
	for name := range streams {
		consecutiveTopic(t, name, got[name], 1)
	}
	if n := metricValue(t, srv.URL, "mirrorql_live_subscriptions", nil); n != 2 {
		t.Errorf("%v open subscriptions after the outage, want 2", n)
	}
}

// TestGRPCShutdown: SIGTERM ends every stream UNAVAILABLE (the SDKs
// resubscribe after it), within the grace.
func TestGRPCShutdown(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t)
	streams := map[string]<-chan topicEvent{}
	for name, sub := range clients(t, srv, addr) {
		streams[name] = sub(t, fromEpoch(topicQuery(501)))
	}
	for name, ch := range streams {
		takeTopic(t, ch, 5, patience)
		_ = name
	}
	start := time.Now()
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for name, ch := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case ev := <-ch:
				if !ev.End || ev.Code != codes.Unavailable {
					t.Errorf("%s at shutdown: %+v, want UNAVAILABLE", name, ev)
				}
			case <-time.After(patience):
				t.Errorf("%s: no end %s after SIGTERM", name, patience)
			}
		}()
	}
	wg.Wait()
	t.Logf("every stream ended %s after SIGTERM", time.Since(start).Round(time.Millisecond))
}

// TestGRPCCORS: a gRPC-Web preflight from another origin is allowed with
// the SDK's headers, and the trailers are exposed; with
// MIRRORQL_GRAPHQL_WS_ORIGINS set, only the origins listed.
func TestGRPCCORS(t *testing.T) {
	t.Parallel()
	dbURL, _ := testdb.New(t)
	open := startServer(t, dbURL)
	closed := startServer(t, dbURL, "MIRRORQL_GRAPHQL_WS_ORIGINS=https://app.example")
	preflight := func(base, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, base+subscribeTopic, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-grpc-web,x-user-agent")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := preflight(open.URL, "https://elsewhere.example"); r.Header.Get("Access-Control-Allow-Origin") == "" ||
		!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "x-grpc-web") {
		t.Errorf("open preflight: %d %v", r.StatusCode, r.Header)
	}
	if r := preflight(closed.URL, "https://elsewhere.example"); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("an origin not listed was allowed: %v", r.Header)
	}
	if r := preflight(closed.URL, "https://app.example"); r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("the listed origin was refused: %v", r.Header)
	}
	req, _ := http.NewRequest(http.MethodPost, open.URL+subscribeTopic, bytes.NewReader(grpcFrame(nil)))
	req.Header.Set("Origin", "https://elsewhere.example")
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if exposed := strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")); !strings.Contains(exposed, "grpc-status") ||
		!strings.Contains(exposed, "grpc-message") {
		t.Errorf("exposed headers %q", exposed)
	}
}

// TestGRPCMetrics: the face's calls are counted by procedure, protocol and
// code, and its streams are the hub's subscriptions.
func TestGRPCMetrics(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t)
	ch := grpcGo(grpcConn(t, addr))(t, fromEpoch(topicQuery(501)))
	takeTopic(t, ch, 5, patience)
	web := connectGo(srv.URL, connect.WithGRPCWeb())(t, topicQuery(9999))
	endOf(t, web, patience)
	proc := subscribeTopic
	waitMetric(t, srv.URL, "mirrorql_grpc_calls_in_flight", map[string]string{"procedure": proc, "protocol": "grpc"}, 1, patience)
	waitMetric(t, srv.URL, "mirrorql_grpc_calls_total", map[string]string{"procedure": proc, "protocol": "grpcweb", "code": "not_found"}, 1, patience)
	waitMetric(t, srv.URL, "mirrorql_live_subscriptions", nil, 1, patience)
}

// TestGRPCCaps: the caps are the GraphQL streams': per HTTP/2 connection
// and per process (both faces together), RESOURCE_EXHAUSTED past them, the
// connection kept.
func TestGRPCCaps(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t, "MIRRORQL_LIVE_MAX_SUBSCRIPTIONS=3", "MIRRORQL_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION=2")
	one := grpcGo(grpcConn(t, addr))
	one(t, topicQuery(501))
	one(t, topicQuery(502))
	waitSubscribed(t, srv, 2)
	if ev := endOf(t, one(t, topicQuery(503)), patience); ev.Code != codes.ResourceExhausted ||
		!strings.Contains(ev.Err, "per connection") {
		t.Errorf("third on one connection: %v %q", ev.Code, ev.Err)
	}
	// A WebSocket's subscription counts toward the process's cap.
	openWS(t, srv.URL).subscribe("a", subscriptionQuery(`topicId: "0.0.504"`))
	waitSubscribed(t, srv, 3)
	if ev := endOf(t, grpcGo(grpcConn(t, addr))(t, topicQuery(505)), patience); ev.Code != codes.ResourceExhausted {
		t.Errorf("fourth in the process: %v %q", ev.Code, ev.Err)
	}
}

// TestGRPCLongDatabaseOutage: past MIRRORQL_LIVE_OUTAGE a stream ends
// UNAVAILABLE (the SDKs resubscribe), not before.
func TestGRPCLongDatabaseOutage(t *testing.T) {
	t.Parallel()
	const topic = 612
	cluster, w := liveCluster(t, topic)
	addr := freeAddr(t)
	srv := startServer(t, cluster.URL(), "MIRRORQL_GRPC_LISTEN="+addr, "MIRRORQL_LIVE_OUTAGE=2s")
	ch := grpcGo(grpcConn(t, addr))(t, topicQuery(topic))
	waitSubscribed(t, srv, 1)
	appendMessages(t, w, liveRow{Topic: topic})
	takeTopic(t, ch, 1, patience)
	stopped := time.Now()
	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	ev := endOf(t, ch, patience)
	if ev.Code != codes.Unavailable {
		t.Errorf("after the outage: %v %q, want UNAVAILABLE", ev.Code, ev.Err)
	}
	if took := time.Since(stopped); took < 2*time.Second {
		t.Errorf("ended %s into the outage, before its 2 s limit", took)
	}
}
