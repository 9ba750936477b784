package charttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m, removeBinary) }

var (
	scrapeOnce  sync.Once
	scraped     map[string]bool
	scrapeError error
)

// exported runs `mirrorql serve` (built from the repository's own module) on
// a fresh database, drives each face once — REST with the response cache, a
// GraphQL query, a gRPC subscription that ends by its end time — and returns
// the names of the samples its /metrics then shows.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	scrapeOnce.Do(func() { scraped, scrapeError = scrape(t) })
	if scrapeError != nil {
		t.Fatal(scrapeError)
	}
	return scraped
}

func scrape(t *testing.T) (map[string]bool, error) {
	dbURL, b := testdb.New(t)
	if _, err := b.ExecContext(context.Background(), `INSERT INTO entity (id, num, realm, shard, type, memo, timestamp_range)
		VALUES (700, 700, 0, 0, 'TOPIC', '', int8range(1, null))`); err != nil {
		return nil, err
	}
	bin, err := buildMirrorql()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	// The gRPC face on the main listener (as the SDKs' port serves it), a
	// small pool beside the other tests' databases.
	cmd.Env = append(os.Environ(), "MIRRORQL_DATABASE_URL="+dbURL, "MIRRORQL_LISTEN="+addr,
		"MIRRORQL_GRPC_LISTEN=", "MIRRORQL_DB_POOL_SIZE=2", "MIRRORQL_LOG_LEVEL=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("mirrorql's log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	if err := waitReady(base + "/health/readiness"); err != nil {
		return nil, err
	}
	for _, p := range []string{"/api/v1/schedules", "/api/v1/schedules", "/api/v1/topics/0.0.700/messages", "/api/v1/topics/700", "/dashboard"} {
		if _, err := get(base + p); err != nil {
			return nil, err
		}
	}
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	subscribe(base)
	// The stream ends on the server a moment after the client hangs up.
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if body, err = get(base + "/metrics"); err != nil {
			return nil, err
		}
		if strings.Contains(body, "mirrorql_live_subscriptions_ended_total{") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names, sc.Err()
}

func waitReady(url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: not ready in 20s", url)
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// subscribe follows topic 0.0.700 over Connect's JSON streaming protocol
// for a moment, then hangs up: the service counts the stream in flight, then
// ended (reason client_gone).
func subscribe(base string) {
	msg := []byte(`{"topicID":{"topicNum":"700"},"consensusStartTime":{"seconds":"0"}}`)
	env := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(env[1:], uint32(len(msg)))
	env = append(env, msg...)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost,
		base+grpcPrefix+"ConsensusService/subscribeTopic", bytes.NewReader(env))
	req.Header.Set("Content-Type", "application/connect+json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// known: name is a sample the service exported.
func known(names map[string]bool, name string) bool { return names[name] }

// promNames finds the metric names in PromQL text: selectors (name{…}),
// and any word with the prefixes of the service's families, braced or not.
var promName = regexp.MustCompile(`\b((?:mirrorql|go|process)_[a-zA-Z0-9_:]+)`)

func promqlMetrics(expr string) []string {
	seen := map[string]bool{}
	for _, n := range exprMetrics(expr) {
		seen[n] = true
	}
	for _, m := range promName.FindAllStringSubmatch(expr, -1) {
		seen[m[1]] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Every metric an alert reads is one the running service exports.
func TestAlertMetricsExported(t *testing.T) {
	names := exported(t)
	for set, file := range valueSets {
		values := readValues(t, file)
		values["prometheusRules"] = map[string]any{"enabled": true}
		for _, g := range rules(t, values).Spec.Groups {
			for _, r := range g.Rules {
				for _, n := range promqlMetrics(r.Expr.String()) {
					if !known(names, n) {
						t.Errorf("%s: alert %s reads %s, which mirrorql does not export", set, r.Alert, n)
					}
				}
			}
		}
	}
}

// Every metric a dashboard panel or variable reads is one the running
// service exports.
func TestDashboardMetricsExported(t *testing.T) {
	names := exported(t)
	files, _ := filepath.Glob(filepath.Join(chartDir, "dashboards", "*.json"))
	if len(files) == 0 {
		t.Fatal("no dashboard in the chart")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var exprs []string
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
						exprs = append(exprs, s)
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(doc)
		if len(exprs) < 30 {
			t.Fatalf("%s: %d queries, expected a panel per figure", f, len(exprs))
		}
		for _, e := range exprs {
			ms := promqlMetrics(e)
			if len(ms) == 0 {
				t.Errorf("%s: query %q reads no metric", filepath.Base(f), e)
			}
			for _, n := range ms {
				if !known(names, n) {
					t.Errorf("%s: %q reads %s, which mirrorql does not export", filepath.Base(f), e, n)
				}
			}
		}
	}
}
