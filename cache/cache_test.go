package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"mirrorql/rest"
	"mirrorql/tests/prereq"
)

// clock is a settable time for the memory store.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestMemoryExpiryAndBound(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	m := NewMemory(2, 0, clk.Now)
	ctx := context.Background()
	e := Entry{Status: 200, Header: http.Header{"Etag": {"x"}}, Body: []byte("b")}
	_ = m.Set(ctx, "a", e, 10*time.Second)
	if got, ok, err := m.Get(ctx, "a"); !ok || err != nil || string(got.Body) != "b" {
		t.Fatalf("Get a = %v %v %v", got, ok, err)
	}
	clk.Add(9999 * time.Millisecond)
	if _, ok, _ := m.Get(ctx, "a"); !ok {
		t.Fatal("expired before its lifetime")
	}
	clk.Add(time.Millisecond)
	if _, ok, _ := m.Get(ctx, "a"); ok {
		t.Fatal("live after its lifetime")
	}
	for _, k := range []string{"1", "2", "3"} {
		_ = m.Set(ctx, k, e, time.Minute)
	}
	if m.Len() != 2 {
		t.Fatalf("Len = %d, want 2", m.Len())
	}
	if _, ok, _ := m.Get(ctx, "1"); ok {
		t.Fatal("least recently used entry kept beyond the bound")
	}
}

func TestMaxAge(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"public, max-age=10":            10 * time.Second,
		"max-age=5, s-maxage=2":         2 * time.Second,
		"public, max-age=0":             0,
		"no-store, max-age=10":          0,
		"private, max-age=10":           0,
		"":                              0,
		"max-age=abc":                   0,
		"max-age=999999":                MaxLifetime,
		` PUBLIC , MAX-AGE="7" `:        7 * time.Second,
		"public, max-age=1, must-reval": time.Second,
	} {
		if got := maxAge(cc); got != want {
			t.Errorf("maxAge(%q) = %v, want %v", cc, got, want)
		}
	}
}

// listHandler answers like rest.sendNode does, counting its calls; the body
// changes with every call, as data would.
type listHandler struct {
	mu    sync.Mutex
	calls int
	cc    string
}

func (h *listHandler) serve(c echo.Context) error {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	body := []byte(`{"schedules":[` + strconv.Itoa(n) + `],"links":{"next":"/api/v1/schedules?limit=1&schedule.id=gt:0.0.` + strconv.Itoa(n) + `"}}`)
	hdr := c.Response().Header()
	hdr.Set("Cache-Control", h.cc)
	hdr.Set("Link", `</api/v1/schedules?limit=1&schedule.id=gt:0.0.`+strconv.Itoa(n)+`>; rel="next"`)
	etag := `W/"` + strconv.Itoa(n) + `"`
	hdr.Set("ETag", etag)
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "application/json; charset=utf-8", body)
}

func (h *listHandler) count() int { h.mu.Lock(); defer h.mu.Unlock(); return h.calls }

type results struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *results) add(_, result string) { r.mu.Lock(); r.n[result]++; r.mu.Unlock() }
func (r *results) get(result string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[result]
}

func newEcho(store Store, h *listHandler) (*echo.Echo, *results) {
	res := &results{n: map[string]int{}}
	e := echo.New()
	e.Pre(rest.CanonicalRoute)
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024}))
	e.Use(Middleware(Options{Store: store, Routes: map[string]Version{"/api/v1/schedules": func(context.Context) (string, error) { return "v1", nil }}, Result: res.add}))
	e.Match([]string{http.MethodGet, http.MethodHead}, "/api/v1/schedules", h.serve)
	e.GET("/api/v1/schedules/:id", h.serve)
	e.GET("/api/v1/fail", func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) })
	return e, res
}

func do(e *echo.Echo, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// same compares what a client sees: status, every header, body.
func same(t *testing.T, what string, a, b *httptest.ResponseRecorder) {
	t.Helper()
	if a.Code != b.Code || a.Body.String() != b.Body.String() {
		t.Errorf("%s: %d %q vs %d %q", what, a.Code, a.Body, b.Code, b.Body)
	}
	ah, bh := a.Header(), b.Header()
	if len(ah) != len(bh) {
		t.Errorf("%s: headers %v vs %v", what, ah, bh)
	}
	for k, v := range ah {
		if w, ok := bh[k]; !ok || len(w) != len(v) || (len(v) > 0 && w[0] != v[0]) {
			t.Errorf("%s: header %s = %q vs %q (all: %v vs %v)", what, k, v, w, ah, bh)
		}
	}
}

func TestMiddlewareHitReplayAndExpiry(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	h := &listHandler{cc: "public, max-age=10"}
	e, res := newEcho(NewMemory(100, 0, clk.Now), h)

	first := do(e, http.MethodGet, "/api/v1/schedules?limit=1")
	second := do(e, http.MethodGet, "/api/v1/schedules?limit=1")
	if h.count() != 1 || res.get("hit") != 1 || res.get("miss") != 1 {
		t.Fatalf("calls %d, results %v", h.count(), res.n)
	}
	same(t, "hit", first, second)
	if first.Header().Get("Link") == "" || first.Header().Get("Etag") == "" {
		t.Fatalf("handler headers missing: %v", first.Header())
	}

	// Compressed answers replay the same bytes, compressed again.
	gz1 := do(e, http.MethodGet, "/api/v1/schedules?limit=1", "Accept-Encoding", "gzip")
	if h.count() != 1 || gz1.Header().Get("Content-Encoding") != "" { // below MinLength: not compressed
		t.Fatalf("gzip request: calls %d, headers %v", h.count(), gz1.Header())
	}

	// A conditional request on a hit: 304 with the validators, as the handler does.
	nm := do(e, http.MethodGet, "/api/v1/schedules?limit=1", "If-None-Match", first.Header().Get("Etag"))
	if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("Etag") != first.Header().Get("Etag") ||
		nm.Header().Get("Cache-Control") != "public, max-age=10" || nm.Header().Get("Content-Type") != "" {
		t.Fatalf("If-None-Match hit: %d %v %q", nm.Code, nm.Header(), nm.Body)
	}
	if h.count() != 1 {
		t.Fatal("conditional request reached the handler")
	}

	// Other targets are other keys; the client's spelling of the path is part of the key.
	do(e, http.MethodGet, "/api/v1/schedules?limit=2")
	do(e, http.MethodGet, "/api/v1/schedules/?limit=1")
	if h.count() != 3 {
		t.Fatalf("calls %d, want 3", h.count())
	}

	clk.Add(10 * time.Second)
	third := do(e, http.MethodGet, "/api/v1/schedules?limit=1")
	if h.count() != 4 || third.Body.String() == first.Body.String() {
		t.Fatalf("after expiry: calls %d, body %q", h.count(), third.Body)
	}
}

func TestMiddlewarePassesThrough(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	h := &listHandler{cc: "public, max-age=10"}
	e, res := newEcho(NewMemory(100, 0, clk.Now), h)
	for range 2 {
		do(e, http.MethodHead, "/api/v1/schedules")  // not GET
		do(e, http.MethodGet, "/api/v1/schedules/1") // single lookup: another route
		do(e, http.MethodGet, "/api/v1/fail")
	}
	if h.count() != 4 || len(res.n) != 0 {
		t.Fatalf("calls %d, results %v", h.count(), res.n)
	}
	// A 304 from the handler is not stored.
	do(e, http.MethodGet, "/api/v1/schedules?x", "If-None-Match", `W/"5"`)
	if r := do(e, http.MethodGet, "/api/v1/schedules?x"); r.Code != http.StatusOK || h.count() != 6 {
		t.Fatalf("after a 304: %d, calls %d", r.Code, h.count())
	}
	// Answers that forbid storing are not stored.
	h.cc = "no-store"
	do(e, http.MethodGet, "/api/v1/schedules?y")
	do(e, http.MethodGet, "/api/v1/schedules?y")
	if h.count() != 8 {
		t.Fatalf("no-store cached: calls %d", h.count())
	}
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestRedisOutageFallsBack(t *testing.T) {
	o := RedisOptions{URL: "redis://" + closedAddr(t), Timeout: 200 * time.Millisecond, Backoff: time.Minute}
	r, err := NewRedis(o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// What one failed command costs on this machine now (the dial and its
	// retries, within the timeout), on a store of its own.
	failed := func() time.Duration {
		r, err := NewRedis(o)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		start := time.Now()
		if _, _, err := r.Get(context.Background(), "k"); err == nil {
			t.Fatal("a Get on a closed port succeeded")
		}
		return time.Since(start)
	}()
	// The pace of five requests: the same requests through a store that
	// answers (five misses, all in memory).
	base := func() time.Duration {
		e, _ := newEcho(NewMemory(10, 1<<20, time.Now), &listHandler{cc: "no-store"})
		start := time.Now()
		for range 5 {
			do(e, http.MethodGet, "/api/v1/schedules")
		}
		return time.Since(start)
	}()
	h := &listHandler{cc: "public, max-age=10"}
	e, res := newEcho(r, h)
	start := time.Now()
	for i := range 5 {
		if rec := do(e, http.MethodGet, "/api/v1/schedules"); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if h.count() != 5 || res.get("error") != 5 {
		t.Fatalf("calls %d, results %v", h.count(), res.n)
	}
	// One failed command, then the backoff leaves Redis alone: less than
	// two failed commands' time, beside ten times the requests' own pace,
	// where five failed commands would take five.
	el := time.Since(start)
	t.Logf("5 requests: %s with Redis down, %s through memory; a failed command %s", el, base, failed)
	if limit := 2*failed + 10*base; el > limit {
		t.Fatalf("outage slowed requests down: %v for 5, want < %v (two failed commands of %v and ten times %v through memory)", el, limit, failed, base)
	}
	if _, _, err := r.Get(context.Background(), "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("during backoff Get = %v, want ErrUnavailable", err)
	}
}

// redisOrSkip is a store on the local Redis, keys under a prefix of their own.
func redisOrSkip(t *testing.T) *Redis {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	r, err := NewRedis(RedisOptions{URL: "redis://127.0.0.1:6379/0", KeyPrefix: "mirrorql-test:" + hex.EncodeToString(b[:]) + ":"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		r.Close()
		prereq.Missingf(t, "no Redis answers at 127.0.0.1:6379 (%v): the Redis store test needs it (.ci/run starts redis-server)", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestRedisStore(t *testing.T) {
	r := redisOrSkip(t)
	ctx := context.Background()
	if _, ok, err := r.Get(ctx, "/api/v1/schedules"); ok || err != nil {
		t.Fatalf("Get on an empty prefix: %v %v", ok, err)
	}
	e := Entry{Status: 200, Header: http.Header{"Etag": {`W/"1"`}, "Link": {"<x>; rel=\"next\""}}, Body: []byte("{\"a\":\"\x00\xff\"}")}
	// A lifetime far beyond the round trip and the PTTL below, so that the
	// key is there to ask about however loaded the machine.
	const lifetime = time.Minute
	if err := r.Set(ctx, "/api/v1/schedules", e, lifetime); err != nil {
		t.Fatal(err)
	}
	got, ok, err := r.Get(ctx, "/api/v1/schedules")
	if !ok || err != nil || got.Status != 200 || string(got.Body) != string(e.Body) || got.Header.Get("Link") != e.Header.Get("Link") {
		t.Fatalf("round trip: %+v %v %v", got, ok, err)
	}
	ttl, err := r.client.PTTL(ctx, r.key("/api/v1/schedules")).Result()
	if err != nil || ttl <= 0 || ttl > lifetime {
		t.Fatalf("PTTL = %v, %v", ttl, err)
	}

	h := &listHandler{cc: "public, max-age=10"}
	ec, res := newEcho(r, h)
	a := do(ec, http.MethodGet, "/api/v1/schedules?limit=3")
	b := do(ec, http.MethodGet, "/api/v1/schedules?limit=3")
	same(t, "redis hit", a, b)
	if h.count() != 1 || res.get("hit") != 1 {
		t.Fatalf("calls %d, results %v", h.count(), res.n)
	}
}

func TestMemoryByteBoundAndSweep(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	m := NewMemory(100, 10, clk.Now)
	ctx := context.Background()
	body := func(n int) Entry { return Entry{Status: 200, Body: make([]byte, n)} }
	_ = m.Set(ctx, "a", body(4), time.Minute)
	_ = m.Set(ctx, "b", body(4), time.Minute)
	if m.Len() != 2 || m.Bytes() != 8 {
		t.Fatalf("len %d bytes %d, want 2 and 8", m.Len(), m.Bytes())
	}
	_, _, _ = m.Get(ctx, "a") // a is now the most recently used
	_ = m.Set(ctx, "c", body(4), time.Minute)
	if _, ok, _ := m.Get(ctx, "b"); ok || m.Bytes() != 8 {
		t.Fatalf("past the byte bound the least recently used entry stays: bytes %d", m.Bytes())
	}
	_ = m.Set(ctx, "huge", body(11), time.Minute)
	if _, ok, _ := m.Get(ctx, "huge"); ok {
		t.Fatal("an entry larger than the bound was stored")
	}
	clk.Add(2 * time.Minute)
	_ = m.Set(ctx, "d", body(1), time.Minute)
	if m.Len() != 1 || m.Bytes() != 1 {
		t.Fatalf("expired entries kept: len %d bytes %d", m.Len(), m.Bytes())
	}
}
