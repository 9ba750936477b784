package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// gate is a TCP proxy to a PostgreSQL server that can stop letting new
// connections through (a server out of connection slots, or one too busy to
// answer a start-up within the connect timeout, looks the same to the pool:
// a connect that fails). Connections already through stay.
type gate struct {
	ln       net.Listener
	target   string
	closed   atomic.Bool
	accepted atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newGate(t *testing.T, target string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, target: target}
	g.wg.Go(g.serve)
	t.Cleanup(func() {
		ln.Close()
		g.mu.Lock()
		for _, c := range g.conns {
			c.Close()
		}
		g.mu.Unlock()
		g.wg.Wait()
	})
	return g
}

func (g *gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		if g.closed.Load() {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", g.target)
		if err != nil {
			c.Close()
			continue
		}
		g.accepted.Add(1)
		g.mu.Lock()
		g.conns = append(g.conns, c, up)
		g.mu.Unlock()
		g.wg.Go(func() { _, _ = io.Copy(up, c); up.Close() })
		g.wg.Go(func() { _, _ = io.Copy(c, up); c.Close() })
	}
}

// TestColdBurst: a burst of concurrent requests on a service that has just
// started gets no 503, although the database takes no new connection once
// the service is up — the first requests of a load that starts at once wait
// for the pool's connections, opened before the service serves, instead of
// each connecting on its own (the first seconds of `make soak`).
func TestColdBurst(t *testing.T) {
	dbURL, _ := testdb.New(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(t, u.Host)
	u.Host = g.ln.Addr().String()

	const pool = 4
	cfg := config.Defaults()
	cfg.LiveEnabled, cfg.CacheEnabled = false, false
	cfg.DatabaseURL = u.String()
	// prepared statements and the simple protocol (behind PgBouncer)
	for _, prepare := range []bool{true, false} {
		t.Run(fmt.Sprintf("prepare=%v", prepare), func(t *testing.T) {
			before := g.accepted.Load()
			g.closed.Store(false)
			d, err := db.Open(db.Options{URL: cfg.DatabaseURL, Prepare: prepare, PoolSize: pool,
				StatementTimeout: 5 * time.Second, ConnectTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			log := slog.New(slog.DiscardHandler)
			ops, err := NewOperations(context.Background(), cfg, d, log)
			if err != nil {
				t.Fatal(err)
			}
			defer ops.Close()
			e := New(cfg, d, log, ops, []byte("openapi: 3.0.3\n"))
			if got := d.Bun().DB.Stats().OpenConnections; got != pool {
				t.Errorf("%d connections open once the service is built, want the pool's %d", got, pool)
			}
			g.closed.Store(true) // from now on a request that connects fails

			targets := []string{
				"/api/v1/schedules?limit=2",
				"/api/v1/topics/0.0.2001/messages?limit=2",
				"/api/v1/topics/messages/1700000000.000000001",
			}
			var wg sync.WaitGroup
			var failed atomic.Int64
			for i := range 16 * pool {
				wg.Go(func() {
					target := targets[i%len(targets)]
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
					if rec.Code == http.StatusServiceUnavailable || rec.Code >= 500 {
						if failed.Add(1) == 1 {
							t.Errorf("%s: %d %s", target, rec.Code, strings.TrimSpace(rec.Body.String()))
						}
					}
				})
			}
			wg.Wait()
			if n := failed.Load(); n > 0 {
				t.Errorf("%d of %d requests failed", n, 16*pool)
			}
			if got := g.accepted.Load() - before; got != pool {
				t.Errorf("%d connections went through, want the pool's %d", got, pool)
			}
		})
	}
}
