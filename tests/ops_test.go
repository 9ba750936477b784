package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/uptrace/bun"

	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
)

// opsSeed fills a fresh database with a small data set.
func opsSeed(t *testing.T) (string, *bun.DB) {
	t.Helper()
	url, b := testdb.New(t)
	o := seed.DefaultOptions()
	o.Topics, o.MessagesPerTopic, o.Schedules = 3, 20, 10
	if _, err := seed.RunURL(context.Background(), url, o); err != nil {
		t.Fatal(err)
	}
	return url, b
}

// scrape fetches /metrics and parses it.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	status, _, body := get(t, base+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return mf
}

// sample finds the metric of family name whose labels include want.
func sample(mf map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := mf[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func TestOpsMetrics(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	s := startServer(t, url, "MIRRORQL_DB_POOL_SIZE=7")
	for range 3 {
		if st, _, b := get(t, s.URL+"/api/v1/topics/0.0.2001/messages?limit=2"); st != http.StatusOK {
			t.Fatalf("messages: %d %s", st, b)
		}
	}
	get(t, s.URL+"/api/v1/topics/0.0.2001")
	get(t, s.URL+"/api/v1/topics/0.0.99999/messages") // 404 on a known route
	get(t, s.URL+"/api/v1/schedules?limit=2")
	get(t, s.URL+"/api/v1/schedules?limit=2")
	for i := range 5 {
		get(t, fmt.Sprintf("%s/no/such/path/%d", s.URL, i))
		get(t, fmt.Sprintf("%s/api/v1/nothing-%d", s.URL, i))
	}
	gql, _ := http.Post(s.URL+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if gql != nil {
		gql.Body.Close()
	}

	mf := scrape(t, s.URL)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mirrorql_http_requests_total", map[string]string{"face": "rest", "route": "/api/v1/topics/:topicId/messages", "method": "GET", "status": "200"}, 3},
		{"mirrorql_http_requests_total", map[string]string{"face": "rest", "route": "/api/v1/topics/:topicId/messages", "method": "GET", "status": "404"}, 1},
		{"mirrorql_http_requests_total", map[string]string{"face": "rest", "route": "/api/v1/topics/:id", "method": "GET", "status": "200"}, 1},
		{"mirrorql_http_requests_total", map[string]string{"face": "rest", "route": "/api/v1/schedules", "method": "GET", "status": "200"}, 2},
		{"mirrorql_http_requests_total", map[string]string{"face": "ops", "route": "unmatched", "method": "GET", "status": "404"}, 5},
		{"mirrorql_http_requests_total", map[string]string{"face": "rest", "route": "unmatched", "method": "GET", "status": "404"}, 5},
		{"mirrorql_http_request_duration_seconds", map[string]string{"face": "rest", "route": "/api/v1/topics/:topicId/messages", "method": "GET"}, 4},
		{"mirrorql_response_cache_requests_total", map[string]string{"store": "memory", "result": "miss"}, 1},
		{"mirrorql_response_cache_requests_total", map[string]string{"store": "memory", "result": "hit"}, 1},
		{"mirrorql_db_pool_max_open_connections", nil, 7},
		{"mirrorql_build_info", nil, 1},
	} {
		if got := value(sample(mf, tc.name, tc.labels)); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if g := sample(mf, "mirrorql_http_requests_total", map[string]string{"face": "graphql", "route": "/graphql", "method": "POST"}); g == nil {
		t.Log("no GraphQL request counted (is /graphql mounted?)")
	}
	if v := value(sample(mf, "mirrorql_db_pool_open_connections", nil)); v < 1 || v > 7 {
		t.Errorf("mirrorql_db_pool_open_connections = %v", v)
	}
	for _, name := range []string{"mirrorql_db_pool_in_use_connections", "mirrorql_db_pool_idle_connections",
		"mirrorql_db_pool_wait_count_total", "mirrorql_db_pool_wait_duration_seconds_total",
		"mirrorql_http_requests_in_flight", "go_goroutines", "process_resident_memory_bytes"} {
		if mf[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	// Arbitrary paths never become labels.
	for _, m := range mf["mirrorql_http_requests_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "route" && (strings.Contains(l.GetValue(), "no/such") || strings.Contains(l.GetValue(), "nothing-")) {
				t.Errorf("raw path as a route label: %s", l.GetValue())
			}
		}
	}
	// The scrape itself is counted under its route on the next scrape.
	mf = scrape(t, s.URL)
	if got := value(sample(mf, "mirrorql_http_requests_total", map[string]string{"route": "/metrics", "status": "200"})); got < 1 {
		t.Errorf("/metrics not counted under its route: %v", got)
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestOpsRequestID(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	s := startServer(t, url)

	_, h, _ := get(t, s.URL+"/api/v1/topics/0.0.2001", "X-Request-Id", "trace-42:abc")
	if got := h.Get("X-Request-Id"); got != "trace-42:abc" {
		t.Errorf("given id echoed as %q", got)
	}
	_, h, _ = get(t, s.URL+"/api/v1/schedules", "X-Request-Id", "bad id\t<b>"+strings.Repeat("z", 300))
	if got := h.Get("X-Request-Id"); !strings.HasPrefix(got, "badidbzzz") || len(got) != 128 {
		t.Errorf("unsafe id echoed as %q (%d)", got, len(got))
	}
	_, h1, _ := get(t, s.URL+"/api/v1/topics/0.0.2001/messages?limit=1")
	_, h2, _ := get(t, s.URL+"/no/such/route")
	id1, id2 := h1.Get("X-Request-Id"), h2.Get("X-Request-Id")
	if !hexID.MatchString(id1) || !hexID.MatchString(id2) || id1 == id2 {
		t.Errorf("generated ids %q, %q", id1, id2)
	}

	// One JSON log line per request, with method, route template, status,
	// duration and id.
	deadline := time.Now().Add(patience)
	for {
		lines := requestLogs(t, s.logs.String())
		l, ok := lines["trace-42:abc"]
		if _, ok2 := lines[id2]; ok && ok2 {
			if l["method"] != "GET" || l["route"] != "/api/v1/topics/:id" || l["status"] != float64(200) || l["duration_ms"] == nil {
				t.Errorf("log line: %v", l)
			}
			if l := lines[id2]; l == nil || l["route"] != "unmatched" || l["status"] != float64(404) {
				t.Errorf("log line of the unmatched request: %v", l)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log lines with the ids trace-42:abc and %s:\n%s", id2, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requestLogs indexes the "request" log lines by request id.
func requestLogs(t *testing.T, logs string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, line := range strings.Split(logs, "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != "request" {
			continue
		}
		id, _ := l["request_id"].(string)
		out[id] = l
	}
	return out
}

func TestOpsShutdownOnSignal(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	s := startServer(t, url, "MIRRORQL_SHUTDOWN_GRACE=5s")
	get(t, s.URL+"/api/v1/schedules")
	begin := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, s.logs.String())
		}
	case <-time.After(patience):
		t.Fatalf("no exit within %s of SIGTERM", patience)
	}
	t.Logf("stopped %v after SIGTERM", time.Since(begin).Round(time.Millisecond))
	if !strings.Contains(s.logs.String(), "http server stopped") {
		t.Errorf("no shutdown log line:\n%s", s.logs.String())
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL, "http://"), time.Second); err == nil {
		c.Close()
		t.Error("still accepting connections after exit")
	}
	// (The request in flight is waited for: see httpserver's tests.)
}

func TestOpsRequestDeadline(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	// A deadline no query can meet: every API request runs into it.
	s := startLiveServer(t, url, "MIRRORQL_REQUEST_TIMEOUT=1ns")
	for _, path := range []string{"/api/v1/schedules", "/api/v1/topics/0.0.2001/messages"} {
		status, h, body := get(t, s.URL+path)
		if status != http.StatusServiceUnavailable || string(body) != unavailableBody ||
			h.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %q %q", path, status, h.Get("Content-Type"), body)
		}
	}
}

// insertSchedule adds a schedule without an entity row.
func insertSchedule(t *testing.T, b *bun.DB, num int64) {
	t.Helper()
	_, err := b.DB.ExecContext(context.Background(),
		`insert into schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, transaction_body)
		 values ($1, $2, 1001, 1001, '\x00')`, num, 1_700_000_000_000_000_000+num)
	if err != nil {
		t.Fatal(err)
	}
}

func fetchResponse(t *testing.T, url string, header ...string) response {
	t.Helper()
	status, h, body := get(t, url, header...)
	return response{status, h, string(body)}
}

// sameResponse compares status, body and the headers the handlers set.
func sameResponse(t *testing.T, what string, a, b response) {
	t.Helper()
	if a.status != b.status || a.body != b.body {
		t.Errorf("%s: %d %s\nvs %d %s", what, a.status, a.body, b.status, b.body)
	}
	for _, k := range []string{"Cache-Control", "Content-Type", "ETag", "Link", "Access-Control-Allow-Origin"} {
		if fmt.Sprint(a.header.Values(k)) != fmt.Sprint(b.header.Values(k)) {
			t.Errorf("%s: %s %q vs %q", what, k, a.header.Values(k), b.header.Values(k))
		}
	}
}

// checkScheduleCache proves, on servers s (cached) and fresh (not cached) over
// b's database: a hit replays the stored answer exactly, a single lookup is
// never served from the cache, new rows show in the list once the entry
// expires after its max-age (10 s), and a reload of the tables (TRUNCATE)
// retires the entry at once.
func checkScheduleCache(t *testing.T, b *bun.DB, s, fresh *server, store string) {
	const list = "/api/v1/schedules?limit=1"
	cacheCount := func(result string) float64 {
		return value(sample(scrape(t, s.URL), "mirrorql_response_cache_requests_total", map[string]string{"store": store, "result": result}))
	}
	before := time.Now() // the entry is stored after this: it lives until before+10 s at least
	first := fetchResponse(t, s.URL+list)
	// The requests before the expiry, each timed: the slowest is the
	// machine's pace for the request that finds the entry expired.
	slowest := time.Since(before)
	timed := func(f func() response) response {
		start := time.Now()
		r := f()
		slowest = max(slowest, time.Since(start))
		return r
	}
	if first.status != http.StatusOK || first.header.Get("Link") == "" || first.header.Get("Cache-Control") != "public, max-age=10" {
		t.Fatalf("first answer: %d %v %s", first.status, first.header, first.body)
	}
	sameResponse(t, "cached answer vs the handler's", first, fetchResponse(t, fresh.URL+list))

	// New data: the list lags behind, the single lookup does not.
	insertSchedule(t, b, 1)
	hit := timed(func() response { return fetchResponse(t, s.URL+list) })
	sameResponse(t, "hit", first, hit)
	if st, _, body := get(t, s.URL+"/api/v1/schedules/0.0.1"); st != http.StatusOK || !strings.Contains(string(body), `"schedule_id":"0.0.1"`) {
		t.Errorf("single lookup of the new schedule: %d %s", st, body)
	}
	if nm := timed(func() response { return fetchResponse(t, s.URL+list, "If-None-Match", first.header.Get("ETag")) }); nm.status != http.StatusNotModified || nm.body != "" {
		t.Errorf("If-None-Match on a hit: %d %q", nm.status, nm.body)
	}
	if got := timed(func() response { return fetchResponse(t, fresh.URL+list) }); got.body == first.body {
		t.Fatalf("the uncached server does not see the new schedule")
	}
	if v := cacheCount("hit"); v != 2 {
		t.Errorf("%s hits = %v, want 2", store, v)
	}

	// Wait for the entry to expire: poll until the new schedule shows, no
	// sooner than max-age (10 s) after the entry was stored, and no later
	// than that plus twenty times the slowest request above (the entry was
	// stored within the first; the answer that finds it expired is one
	// more, after a poll's pause).
	expiry := before.Add(10 * time.Second)
	const pause = 50 * time.Millisecond // between polls once the entry may have expired
	late := pause + 20*slowest
	var after response
	for deadline := expiry.Add(late); ; {
		after = fetchResponse(t, s.URL+list)
		answered := time.Now()
		if after.body != first.body {
			if answered.Before(expiry) {
				t.Errorf("the entry expired %v before its max-age (10 s) ran out", expiry.Sub(answered).Round(time.Millisecond))
			}
			break
		}
		if answered.After(deadline) {
			t.Fatalf("%s after max-age (twenty times the slowest request, %s) the stale answer is still served: %s", late, slowest, after.body)
		}
		// Poll sparsely while the entry must still be live, closely once it may have expired.
		wait := pause
		if until := time.Until(expiry); until > time.Second {
			wait = until - time.Second
		}
		time.Sleep(wait)
	}
	if !strings.Contains(after.body, `"schedule_id":"0.0.1"`) {
		t.Errorf("after max-age: the new schedule is missing: %s", after.body)
	}
	sameResponse(t, "after expiry", after, fetchResponse(t, fresh.URL+list))

	// A reload of the tables is seen at once, within the entry's lifetime.
	if _, err := b.ExecContext(context.Background(), "TRUNCATE schedule"); err != nil {
		t.Fatal(err)
	}
	if got := fetchResponse(t, s.URL+list); !strings.Contains(got.body, `"schedules":[]`) {
		t.Errorf("after TRUNCATE the old answer is still served: %s", got.body)
	}
}

func TestOpsScheduleCacheInProcess(t *testing.T) {
	t.Parallel()
	url, b := opsSeed(t)
	s := startServer(t, url)
	fresh := startServer(t, url, "MIRRORQL_CACHE_ENABLED=false")
	checkScheduleCache(t, b, s, fresh, "memory")
}

// redisAnswers reports whether a Redis server answers PING at addr.
func redisAnswers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 16)
	n, _ := c.Read(buf)
	return strings.HasPrefix(string(buf[:n]), "+PONG")
}

func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "mirrorql-test:" + hex.EncodeToString(b[:]) + ":"
}

func TestOpsScheduleCacheRedis(t *testing.T) {
	t.Parallel()
	if !redisAnswers("127.0.0.1:6379") {
		skipOrFailInCI(t, "no Redis answers at 127.0.0.1:6379 (.ci/run starts redis-server): the shared (Redis) response cache test needs it")
	}
	url, b := opsSeed(t)
	env := []string{"MIRRORQL_REDIS_URL=redis://127.0.0.1:6379/0", "MIRRORQL_REDIS_KEY_PREFIX=" + randomPrefix()}
	s := startServer(t, url, env...)
	fresh := startServer(t, url, "MIRRORQL_CACHE_ENABLED=false")

	// Shared: what one instance stored, another replays.
	other := startServer(t, url, env...)
	a := fetchResponse(t, other.URL+"/api/v1/schedules?limit=2")
	bAns := fetchResponse(t, s.URL+"/api/v1/schedules?limit=2")
	sameResponse(t, "shared entry", a, bAns)
	if v := value(sample(scrape(t, s.URL), "mirrorql_response_cache_requests_total", map[string]string{"store": "redis", "result": "hit"})); v != 1 {
		t.Fatalf("second instance: redis hits = %v, want 1", v)
	}
	// Reset the hit count's meaning for checkScheduleCache: a new server.
	s2 := startServer(t, url, env...)
	checkScheduleCache(t, b, s2, fresh, "redis")
}

func TestOpsRedisOutage(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	closed := freeAddr(t) // nothing listens there
	s := startServer(t, url, "MIRRORQL_REDIS_URL=redis://"+closed+"/0")
	fresh := startServer(t, url, "MIRRORQL_CACHE_ENABLED=false")
	for i := range 6 {
		path := fmt.Sprintf("/api/v1/schedules?limit=%d", 1+i%2)
		got := fetchResponse(t, s.URL+path)
		if got.status != http.StatusOK {
			t.Fatalf("%s during the outage: %d %s", path, got.status, got.body)
		}
		sameResponse(t, "outage answer", got, fetchResponse(t, fresh.URL+path))
	}
	mf := scrape(t, s.URL)
	if v := value(sample(mf, "mirrorql_response_cache_requests_total", map[string]string{"store": "redis", "result": "error"})); v != 6 {
		t.Errorf("redis errors counted = %v, want 6", v)
	}
	if v := value(sample(mf, "mirrorql_http_requests_total", map[string]string{"route": "/api/v1/schedules", "status": "200"})); v != 6 {
		t.Errorf("200 answers = %v, want 6", v)
	}
	if !strings.Contains(s.logs.String(), "redis") {
		t.Errorf("the outage is not logged:\n%s", s.logs.String())
	}
}

var assetRef = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

func TestOpsSwaggerUI(t *testing.T) {
	t.Parallel()
	url, _ := testdb.New(t)
	s := startServer(t, url)
	status, h, page := get(t, s.URL+"/api/v1/docs")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "swagger-ui") {
		t.Fatalf("/api/v1/docs: %d %s\n%s", status, h.Get("Content-Type"), page)
	}
	refs := assetRef.FindAllStringSubmatch(string(page), -1)
	if len(refs) < 4 {
		t.Fatalf("page references %d assets", len(refs))
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("non-local asset %q", m[1])
			continue
		}
		if st, _, body := get(t, s.URL+m[1]); st != http.StatusOK || len(body) == 0 {
			t.Errorf("asset %s: %d", m[1], st)
		}
	}
	spec, err := os.ReadFile("../openapi.yml")
	if err != nil {
		t.Fatal(err)
	}
	if st, _, body := get(t, s.URL+"/api/v1/docs/openapi.yml"); st != http.StatusOK || !bytes.Equal(body, spec) {
		t.Errorf("openapi.yml: %d, %d bytes (want the repository's %d)", st, len(body), len(spec))
	}
}

func TestOpsHealthcheckCommand(t *testing.T) {
	t.Parallel()
	url, _ := testdb.New(t)
	s := startServer(t, url)
	run := func(listen string) error {
		cmd := exec.Command(binary(t), "healthcheck")
		cmd.Env = append(os.Environ(), "MIRRORQL_LISTEN="+listen)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("healthcheck %s: %v: %s", listen, err, out)
		}
		return err
	}
	if err := run(strings.TrimPrefix(s.URL, "http://")); err != nil {
		t.Errorf("healthcheck of a ready server failed: %v", err)
	}
	var exit *exec.ExitError
	if err := run(freeAddr(t)); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("healthcheck with nothing listening: %v, want exit status 1", err)
	}
}

// The Dockerfile builds with CGO_ENABLED=0 for a static binary on
// distroless; no Docker engine runs here, so check that nothing the binary
// needs requires cgo (cheap: no second compilation of everything).
func TestOpsBuildsWithoutCgo(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-e",
		"-f", "{{if .Error}}error {{.ImportPath}}: {{.Error}}\n{{end}}{{if .CgoFiles}}cgo {{.ImportPath}}\n{{end}}", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("CGO_ENABLED=0 go list: %v\n%s", err, out)
	}
}

// TestOpsListLength: a list page past net/http's 2 KiB buffer goes out with
// its Content-Length, as Express sends it, not chunked; compressed, it has
// none (the length is not known before the end); a 304 has no body.
func TestOpsListLength(t *testing.T) {
	t.Parallel()
	url, _ := opsSeed(t)
	s := startServer(t, url)
	fetch := func(header ...string) response {
		t.Helper()
		return request(t, http.MethodGet, s.URL+"/api/v1/topics/0.0.2001/messages?limit=20", "", header...)
	}
	plain := fetch()
	if plain.status != http.StatusOK || len(plain.body) <= 2048 {
		t.Fatalf("list: %d, %d bytes (the test needs a page past 2 KiB)", plain.status, len(plain.body))
	}
	// Go's client drops Content-Length from a chunked response's header.
	if cl := plain.header.Get("Content-Length"); cl != strconv.Itoa(len(plain.body)) {
		t.Errorf("plain: Content-Length %q for %d bytes", cl, len(plain.body))
	}
	gz := fetch("Accept-Encoding", "gzip")
	if gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("Content-Length") == strconv.Itoa(len(plain.body)) {
		t.Errorf("gzip: Content-Encoding %q, Content-Length %q (%d bytes compressed)", gz.header.Get("Content-Encoding"),
			gz.header.Get("Content-Length"), len(gz.body))
	}
	nm := fetch("If-None-Match", plain.header.Get("ETag"))
	if nm.status != http.StatusNotModified || len(nm.body) > 0 || nm.header.Get("Content-Length") != "" {
		t.Errorf("304: %d, %d bytes, Content-Length %q", nm.status, len(nm.body), nm.header.Get("Content-Length"))
	}
}
