package observe

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestSanitizeRequestID(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for _, tc := range []struct{ in, want string }{
		{"abc-123", "abc-123"},
		{"  abc\r\n123 ", "abc123"},
		{`<script>"x"</script>`, "scriptx/script"},
		{"trace:01/2+3=4@host_.", "trace:01/2+3=4@host_."},
		{"日本", ""},
		{"", ""},
		{long, long[:MaxRequestIDLength]},
	} {
		if got := SanitizeRequestID(tc.in); got != tc.want {
			t.Errorf("SanitizeRequestID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if a, b := NewRequestID(), NewRequestID(); len(a) != 32 || a == b || SanitizeRequestID(a) != a {
		t.Errorf("NewRequestID: %q, %q", a, b)
	}
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "json", "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "shown" {
		t.Fatalf("json log: %q (%v)", buf.String(), err)
	}
	buf.Reset()
	log, _ = NewLogger(&buf, "text", "debug")
	log.Debug("dbg")
	if !strings.Contains(buf.String(), "msg=dbg") {
		t.Fatalf("text log: %q", buf.String())
	}
	if _, err := NewLogger(&buf, "xml", "info"); err == nil {
		t.Error("format xml accepted")
	}
	if _, err := NewLogger(&buf, "json", "loud"); err == nil {
		t.Error("level loud accepted")
	}
}

// newTestEcho is an Echo with the middleware and a few routes.
func newTestEcho(t *testing.T) (*echo.Echo, *Metrics, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log, _ := NewLogger(&logs, "json", "debug")
	m := NewMetrics()
	e := echo.New()
	e.Use(Middleware(MiddlewareOptions{Log: log, Metrics: m, Routes: e.Routes, Quiet: []string{"/health/liveness"}}))
	e.GET("/api/v1/topics/:id", func(c echo.Context) error {
		if RequestID(c.Request().Context()) == "" {
			t.Error("no request id in the context")
		}
		return c.String(http.StatusOK, c.Param("id"))
	})
	e.GET("/api/v1/fail", func(c echo.Context) error { return errors.New("boom") })
	e.GET("/health/liveness", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.POST("/graphql", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	return e, m, &logs
}

func serve(e *echo.Echo, method, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestMiddlewareRequestID(t *testing.T) {
	e, _, logs := newTestEcho(t)
	rec := serve(e, http.MethodGet, "/api/v1/topics/7", HeaderRequestID, "client-id\x7f-1")
	if got := rec.Header().Get(HeaderRequestID); got != "client-id-1" {
		t.Errorf("echoed id %q, want client-id-1", got)
	}
	rec = serve(e, http.MethodGet, "/api/v1/topics/7")
	generated := rec.Header().Get(HeaderRequestID)
	if len(generated) != 32 {
		t.Errorf("generated id %q", generated)
	}
	if !strings.Contains(logs.String(), `"request_id":"`+generated+`"`) {
		t.Errorf("log lacks the generated id:\n%s", logs.String())
	}
}

func TestMiddlewareLabelsAndLog(t *testing.T) {
	e, m, logs := newTestEcho(t)
	serve(e, http.MethodGet, "/api/v1/topics/7")
	serve(e, http.MethodGet, "/api/v1/topics/8")
	serve(e, http.MethodGet, "/api/v1/fail")
	for i := range 5 {
		serve(e, http.MethodGet, "/random/"+strings.Repeat("x", i))
	}
	serve(e, "BREW", "/api/v1/topics/7")
	serve(e, http.MethodPost, "/graphql")
	serve(e, http.MethodGet, "/health/liveness")

	for _, tc := range []struct {
		labels []string
		want   float64
	}{
		{[]string{FaceREST, "/api/v1/topics/:id", "GET", "200"}, 2},
		{[]string{FaceREST, "/api/v1/fail", "GET", "500"}, 1},
		{[]string{FaceOps, RouteUnmatched, "GET", "404"}, 5},
		{[]string{FaceREST, "/api/v1/topics/:id", "OTHER", "405"}, 1},
		{[]string{FaceGraphQL, "/graphql", "POST", "200"}, 1},
		{[]string{FaceOps, "/health/liveness", "GET", "200"}, 1},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(tc.labels...)); got != tc.want {
			t.Errorf("requests%v = %v, want %v", tc.labels, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(m.requests); n != 6 {
		t.Errorf("%d request series, want 6", n)
	}
	if n := testutil.CollectAndCount(m.duration); n != 6 {
		t.Errorf("%d duration series, want 6", n)
	}

	var sawFail, sawQuiet bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l["msg"] != "request" {
			continue
		}
		for _, k := range []string{"method", "route", "status", "duration_ms", "request_id"} {
			if _, ok := l[k]; !ok {
				t.Errorf("log line lacks %s: %s", k, line)
			}
		}
		if l["route"] == "/api/v1/fail" && l["status"] == float64(500) {
			sawFail = true
		}
		if l["route"] == "/health/liveness" {
			sawQuiet = l["level"] == "DEBUG"
		}
	}
	if !sawFail || !sawQuiet {
		t.Errorf("fail logged with 500: %v, liveness at debug: %v\n%s", sawFail, sawQuiet, logs.String())
	}
}

func TestDBStatsAndBuildInfo(t *testing.T) {
	m := NewMetrics()
	m.RegisterDBStats(func() sql.DBStats {
		return sql.DBStats{MaxOpenConnections: 10, OpenConnections: 3, InUse: 1, Idle: 2, WaitCount: 4}
	})
	m.CacheResult("memory", "hit")
	m.CacheWriteError("redis")
	e := echo.New()
	e.GET("/metrics", echo.WrapHandler(m.Handler()))
	rec := serve(e, http.MethodGet, "/metrics")
	body := rec.Body.String()
	for _, want := range []string{
		"mirrorql_db_pool_max_open_connections 10",
		"mirrorql_db_pool_open_connections 3",
		"mirrorql_db_pool_in_use_connections 1",
		"mirrorql_db_pool_idle_connections 2",
		"mirrorql_db_pool_wait_count_total 4",
		"mirrorql_build_info{",
		`mirrorql_response_cache_requests_total{result="hit",store="memory"} 1`,
		`mirrorql_response_cache_write_errors_total{store="redis"} 1`,
		"go_goroutines",
		"process_cpu_seconds_total",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
