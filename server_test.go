package main

import (
	"context"
	"errors"
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

// TestListenMovable: an address of the command's own moves to a free port of
// the same host when taken, and says so; one the user set fails as listen
// does; anything but a taken port is never moved.
func TestListenMovable(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	taken := busy.Addr().String()
	for _, tc := range []struct {
		name     string
		addr     string
		movable  bool
		open     func(string) (net.Listener, error)
		wantErr  string // a part of the error; "" when it must listen
		moved    bool   // listens elsewhere than addr, and said so
		wantNone bool   // no listener and no error (gRPC set empty)
	}{
		{name: "own default taken", addr: taken, movable: true, open: listen, moved: true},
		{name: "own gRPC default taken", addr: taken, movable: true, open: listenGRPC, moved: true},
		{name: "set by the user, taken", addr: taken, open: listen,
			wantErr: "address already in use (set MIRRORQL_LISTEN to another address"},
		{name: "gRPC set by the user, taken", addr: taken, open: listenGRPC,
			wantErr: "address already in use (set MIRRORQL_GRPC_LISTEN to another address"},
		{name: "own default free", addr: "127.0.0.1:0", movable: true, open: listen},
		{name: "gRPC set empty", addr: "", open: listenGRPC, wantNone: true},
		{name: "bad address is not moved", addr: "256.0.0.1:1", movable: true, open: listen, wantErr: "256.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			ln, err := listenMovable(tc.addr, tc.movable, tc.open, &out, "demo", "LISTEN")
			if ln != nil {
				defer ln.Close()
			}
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				if out.Len() > 0 {
					t.Errorf("said %q", out.String())
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.wantNone:
				if ln != nil {
					t.Fatalf("listens on %s", ln.Addr())
				}
				return
			case ln == nil:
				t.Fatal("no listener")
			}
			got := ln.Addr().String()
			if !tc.moved {
				if out.Len() > 0 {
					t.Errorf("said %q without moving", out.String())
				}
				return
			}
			host, _, _ := net.SplitHostPort(got)
			if got == tc.addr || host != "127.0.0.1" {
				t.Errorf("listens on %s, want another port of 127.0.0.1 than %s", got, tc.addr)
			}
			want := "mirrorql demo: " + tc.addr + " is taken: listening on " + got + " instead (MIRRORQL_LISTEN sets the address)\n"
			if out.String() != want {
				t.Errorf("said %q, want %q", out.String(), want)
			}
		})
	}
}

func TestNoArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		wantHelp bool
		wantOut  string // "" when it must say nothing
	}{
		{name: "none", args: nil},
		{name: "help", args: []string{"-h"}, wantHelp: true},
		{name: "long help", args: []string{"--help"}, wantHelp: true},
		{name: "a flag", args: []string{"--database-url", "postgres://x"},
			wantOut: `mirrorql serve: unexpected argument "--database-url": serve takes none; its settings are MIRRORQL_* variables`},
		{name: "help and more", args: []string{"-h", "x"}, wantOut: `unexpected argument "-h"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			help, err := noArguments("serve", tc.args, &out)
			wantErr := tc.wantOut != ""
			if help != tc.wantHelp || (err != nil) != wantErr || (wantErr && !errors.Is(err, errUsage)) {
				t.Errorf("help %v, err %v; want help %v, an error %v", help, err, tc.wantHelp, wantErr)
			}
			if !strings.Contains(out.String(), tc.wantOut) || (tc.wantOut == "" && out.Len() > 0) {
				t.Errorf("said %q, want %q", out.String(), tc.wantOut)
			}
		})
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
