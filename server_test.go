package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/service"
)

func TestAddresses(t *testing.T) {
	t.Parallel()
	for listen, want := range map[string]string{
		":8080": "127.0.0.1:8080", "0.0.0.0:80": "127.0.0.1:80", "[::]:8080": "127.0.0.1:8080",
		"127.0.0.2:9": "127.0.0.2:9", "localhost:1": "localhost:1",
	} {
		if got := loopback(listen); got != want {
			t.Errorf("loopback(%q) = %q, want %q", listen, got, want)
		}
	}
	for addr, want := range map[string]string{"[::]:8080": "localhost:8080", "0.0.0.0:1": "localhost:1", "127.0.0.1:5": "127.0.0.1:5"} {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := browsable(a, addr); got != want {
			t.Errorf("browsable(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestDemoListen(t *testing.T) {
	t.Parallel()
	if got := demoListen(config.Defaults().Listen, false); got != "127.0.0.1:8080" {
		t.Errorf("demo without MIRRORQL_LISTEN listens on %q, want 127.0.0.1:8080", got)
	}
	if got := demoListen(":9090", true); got != ":9090" {
		t.Errorf("demo with MIRRORQL_LISTEN=:9090 listens on %q", got)
	}
	if got := config.Defaults().Listen; got != ":8080" {
		t.Errorf("serve's default address is %q, want :8080", got)
	}
}

func TestListenBusy(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	ln, err := listen(addr)
	if err == nil {
		ln.Close()
		t.Fatalf("listen on the busy %s succeeded", addr)
	}
	want := "listen tcp " + addr + ": bind: address already in use (set MIRRORQL_LISTEN to another address, e.g. MIRRORQL_LISTEN=127.0.0.1:9090)"
	if err.Error() != want {
		t.Errorf("listen on a busy port:\n got %s\nwant %s", err, want)
	}
	// Other failures are left as they are.
	if _, err := listen("256.0.0.1:1"); err == nil || strings.Contains(err.Error(), "MIRRORQL_LISTEN") {
		t.Errorf("listen on a bad address: %v", err)
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != service.RouteReadiness {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	// The defaults, not the environment: a stray MIRRORQL_ variable must not
	// stop the test from running.
	cfg := config.Defaults()
	cfg.Listen = srv.Listener.Addr().String()
	if err := healthcheck(context.Background(), cfg); err != nil {
		t.Errorf("ready: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := healthcheck(context.Background(), cfg); err == nil {
		t.Error("unready service reported healthy")
	}
	srv.Close()
	if err := healthcheck(context.Background(), cfg); err == nil {
		t.Error("no service reported healthy")
	}
}

// The query layer's default for pools it wraps (tests) is the service's.
func TestCoalesceDefault(t *testing.T) {
	t.Parallel()
	if got := config.Defaults().DBCoalesce; got != db.DefaultCoalesce {
		t.Errorf("MIRRORQL_DB_COALESCE defaults to %d, db.DefaultCoalesce is %d", got, db.DefaultCoalesce)
	}
}
