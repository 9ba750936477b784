package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashgraph/hedera-sdk-go/v2/proto/mirror"
	"google.golang.org/grpc/metadata"
)

// accessLines are the server's access log lines (JSON, msg "request")
// whose request_id is id.
func accessLines(srv *server, id string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(srv.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["request_id"] == id {
			out = append(out, m)
		}
	}
	return out
}

// TestGRPCRequestLog: every call of the gRPC face, which bypasses the REST
// and GraphQL middleware, writes one access log line at its end: the
// procedure, protocol, status code, duration, peer and the client's
// request id, in the REST lines' shape.
func TestGRPCRequestLog(t *testing.T) {
	t.Parallel()
	srv, addr, _ := grpcServer(t)
	// grpc-go on the gRPC listener: a limit completes the stream OK.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-request-id", "grpc-log-1")
	q := fromEpoch(topicQuery(501))
	q.Limit = 2
	stream, err := mirror.NewConsensusServiceClient(grpcConn(t, addr)).SubscribeTopic(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}
	if got, _ := stream.Header(); len(got["x-request-id"]) != 1 || got["x-request-id"][0] != "grpc-log-1" {
		t.Errorf("the request id is not echoed: %v", got)
	}
	// gRPC-Web on the main listener: NOT_FOUND.
	c := connect.NewClient[mirror.ConsensusTopicQuery, mirror.ConsensusTopicResponse](h2c(), srv.URL+subscribeTopic, connect.WithGRPCWeb())
	req := connect.NewRequest(topicQuery(9999))
	req.Header().Set("X-Request-Id", "grpc-log-2")
	if s, err := c.CallServerStream(context.Background(), req); err == nil {
		for s.Receive() {
		}
		_ = s.Close()
	}
	// An unknown method, answered outside connect's handlers.
	unknown := "/com.hedera.mirror.api.proto.ConsensusService/nope"
	hreq, _ := http.NewRequest(http.MethodPost, "http://"+addr+unknown, bytes.NewReader(grpcFrame(nil)))
	hreq.Header.Set("Content-Type", "application/grpc")
	hreq.Header.Set("X-Request-Id", "grpc-log-3")
	if resp, err := h2c().Do(hreq); err != nil {
		t.Fatal(err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	want := map[string]map[string]any{
		"grpc-log-3": {"code": "unimplemented", "protocol": "grpc", "route": unknown},
		"grpc-log-1": {"code": "ok", "protocol": "grpc"},
		"grpc-log-2": {"code": "not_found", "protocol": "grpcweb"},
	}
	// A marker, sent once the three have their lines: the access log is
	// written in order, so once the marker's line is there any second line
	// of the three would be too (rather than a fixed wait for the flush).
	for id := range want {
		for deadline := time.Now().Add(patience); len(accessLines(srv, id)) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no access log line within %s:\n%s", id, patience, srv.logs.String())
			}
		}
	}
	{
		mreq, _ := http.NewRequest(http.MethodPost, "http://"+addr+unknown, bytes.NewReader(grpcFrame(nil)))
		mreq.Header.Set("Content-Type", "application/grpc")
		mreq.Header.Set("X-Request-Id", "grpc-log-marker")
		resp, err := h2c().Do(mreq)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for deadline := time.Now().Add(patience); len(accessLines(srv, "grpc-log-marker")) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no access log line for the marker within %s:\n%s", patience, srv.logs.String())
			}
		}
	}

	for id, fields := range want {
		lines := accessLines(srv, id)
		if len(lines) != 1 {
			t.Fatalf("%s: %d access log lines, want 1:\n%s", id, len(lines), srv.logs.String())
		}
		l := lines[0]
		t.Logf("%s: %v", id, l)
		for k, v := range fields {
			if l[k] != v {
				t.Errorf("%s: %s = %v, want %v (%v)", id, k, l[k], v, l)
			}
		}
		if _, ok := fields["route"]; !ok {
			fields["route"] = subscribeTopic
		}
		if l["route"] != fields["route"] || l["path"] != fields["route"] || l["face"] != "grpc" || l["method"] != "POST" ||
			l["level"] != "INFO" || !strings.HasPrefix(l["peer"].(string), "127.0.0.1:") {
			t.Errorf("%s: %v", id, l)
		}
		if d, ok := l["duration_ms"].(float64); !ok || d <= 0 {
			t.Errorf("%s: duration_ms %v", id, l["duration_ms"])
		}
	}
}
