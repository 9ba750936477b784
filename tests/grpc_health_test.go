package tests

import (
	"context"
	"os"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// TestGRPCHealthWatch: the health service says what /health/readiness says
// — SERVING, NOT_SERVING while the database is down, SERVING once it is
// back — on Check and on Watch streams of both listeners, and those
// streams outlive the server's read and write timeouts (2 s here) and end
// at shutdown without holding it.
func TestGRPCHealthWatch(t *testing.T) {
	t.Parallel()
	cluster, _ := liveCluster(t)
	addr := freeAddr(t)
	// The shutdown grace is what would end a watch the shutdown did not:
	// ending before it is ending at once, however loaded the machine.
	const grace = 15 * time.Second
	srv := startServer(t, cluster.URL(), "MIRRORQL_GRPC_LISTEN="+addr, "MIRRORQL_REQUEST_TIMEOUT=1s",
		"MIRRORQL_SHUTDOWN_GRACE="+grace.String(),
		"MIRRORQL_HTTP_READ_HEADER_TIMEOUT=1s", "MIRRORQL_HTTP_READ_TIMEOUT=2s", "MIRRORQL_HTTP_WRITE_TIMEOUT=2s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bases := []string{"http://" + addr, srv.URL}
	check := func(want grpchealth.Status) {
		t.Helper()
		for _, base := range bases {
			resp, err := grpchealth.NewClient(h2c(), base, connect.WithGRPC()).Check(ctx, &grpchealth.CheckRequest{})
			if err != nil || resp.Status != want {
				t.Errorf("%s Check: %v %v, want %v", base, resp, err, want)
			}
		}
	}
	// A client without a timeout: the stream lives for the test.
	var p = h2c()
	p.Timeout = 0
	watches := map[string]<-chan grpchealth.WatchEvent{}
	for _, base := range bases {
		watches[base] = grpchealth.NewClient(p, base, connect.WithGRPC()).Watch(ctx, &grpchealth.CheckRequest{})
	}
	next := func(want grpchealth.Status, within time.Duration) {
		t.Helper()
		for base, ch := range watches {
			select {
			case ev, ok := <-ch:
				if !ok || ev.Err != nil || ev.Response.Status != want {
					t.Fatalf("%s Watch: %+v (open %v), want %v", base, ev, ok, want)
				}
			case <-time.After(within):
				t.Fatalf("%s Watch: nothing within %s, want %v", base, within, want)
			}
		}
	}
	next(grpchealth.StatusServing, patience)
	check(grpchealth.StatusServing)
	// Past the server's timeouts (2 s), the watches still say what changes:
	// the condition waited for is the server's clock passing them.
	time.Sleep(3 * time.Second)
	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	next(grpchealth.StatusNotServing, patience)
	check(grpchealth.StatusNotServing)
	if err := cluster.StartServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	next(grpchealth.StatusServing, patience)
	check(grpchealth.StatusServing)

	// SIGTERM ends the watches at once, not at the end of the grace.
	start := time.Now()
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for base, ch := range watches {
		select {
		case ev, ok := <-ch:
			if ok && ev.Err == nil {
				t.Errorf("%s Watch at shutdown: %+v, want its end", base, ev)
			}
		case <-time.After(patience):
			t.Errorf("%s Watch: no end %s after SIGTERM", base, patience)
		}
	}
	took := time.Since(start)
	t.Logf("the watches ended %s after SIGTERM", took.Round(time.Millisecond))
	if took >= grace {
		t.Errorf("the watches ended %s after SIGTERM: by the grace (%s), not at once", took, grace)
	}
}
