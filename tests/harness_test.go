// Package tests holds the end-to-end tests: the built binary against a real
// PostgreSQL, the conformance replay and the cross-face checks.
package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"mirrorql/db"
	"mirrorql/tests/apispec"
	"mirrorql/tests/testdb"
	"mirrorql/tools/pgcluster"
)

// TestMain removes the binary built for the tests (some 50 MB a process)
// when they end.
func TestMain(m *testing.M) {
	testdb.Main(m, func() {
		if binPath != "" {
			_ = os.RemoveAll(filepath.Dir(binPath))
		}
	})
}

// patience bounds a wait for what normally takes milliseconds to a few
// seconds (a message arriving, a stream ending, a server answering its
// probe, a metric moving): a passing test never waits it out, however
// loaded the machine, so it only turns a hang into a failure. It is package
// live's patience, doubled for the end-to-end tests, whose every step goes
// through a separate process and its database sessions. A verdict that
// depends on how long something took is a window derived from what the test
// measured, never this.
const patience = 2 * time.Minute

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds mirrorql once per test process (with the race detector when
// MIRRORQL_TEST_RACE is set).
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mirrorql-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mirrorql")
		args := []string{"build", "-o", binPath}
		if os.Getenv("MIRRORQL_TEST_RACE") != "" {
			args = append(args, "-race") // the service under the race detector: its log then reports races
		}
		out, err := exec.Command("go", append(args, "..")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// server is a running mirrorql process.
type server struct {
	URL  string
	cmd  *exec.Cmd
	logs *lockedBuffer
}

// startServer runs `mirrorql serve` against dbURL with extra MIRRORQL_*
// settings and waits until it is ready; the process is stopped at cleanup.
func startServer(t testing.TB, dbURL string, env ...string) *server {
	t.Helper()
	return launch(t, "/health/readiness", dbURL, env...)
}

// launch starts `mirrorql serve` and waits until probe answers 200.
func launch(t testing.TB, probe, dbURL string, env ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary(t), "serve")
	// No gRPC listener unless a test asks for one (the default port is one
	// for the whole machine), and a small pool unless the test says
	// otherwise (the last value of a variable wins): the service opens its
	// whole pool at start, and the tests run side by side on a server of
	// 100 connections.
	cmd.Env = append(os.Environ(), "MIRRORQL_DATABASE_URL="+dbURL, "MIRRORQL_LISTEN="+addr, "MIRRORQL_GRPC_LISTEN=",
		"MIRRORQL_DB_POOL_SIZE=3")
	cmd.Env = append(cmd.Env, env...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: "http://" + addr, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if strings.Contains(logs.String(), "WARNING: DATA RACE") {
			t.Errorf("the server reported a data race")
		}
		if t.Failed() {
			t.Logf("server %s log:\n%s", addr, logs.String())
		}
	})
	deadline := time.Now().Add(patience) // several servers start at once under a parallel run
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL + probe)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server did not answer %s; log:\n%s", probe, logs.String())
	return nil
}

// migratedCluster starts a PostgreSQL cluster of the test's own (one it can
// stop and start again under a running server), migrated, and opens a pool
// on it for the test's own writes; both end at cleanup. It skips the test
// under -short and where PostgreSQL is not installed.
func migratedCluster(t *testing.T) (*pgcluster.Cluster, *bun.DB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster of its own")
	}
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{})
	if errors.Is(err, pgcluster.ErrNotInstalled) {
		skipOrFailInCI(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	w := openWriter(t, cluster.URL())
	if err := db.Migrate(ctx, w); err != nil {
		t.Fatal(err)
	}
	return cluster, w
}

// openWriter is a pool for the test's own writes to url, closed at cleanup.
func openWriter(t *testing.T, url string) *bun.DB {
	t.Helper()
	d, err := db.Open(db.Options{URL: url, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.Bun()
}

var (
	givenMu sync.Mutex
	given   = map[string]bool{}
)

// freeAddr is a loopback address nothing listens on, for a process to bind.
// Tests run in parallel, so an address is handed out once per test process:
// the kernel may offer a port again as soon as the listener that found it
// has closed, before the process it was meant for has bound it.
func freeAddr(t testing.TB) string {
	t.Helper()
	givenMu.Lock()
	defer givenMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !given[addr] {
			given[addr] = true
			return addr
		}
	}
	t.Fatal("no loopback port that was not handed out already")
	return ""
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// get fetches a URL and returns status, headers and body.
func get(t testing.TB, url string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	validateAgainstSpec(t, url, resp, body)
	return resp.StatusCode, resp.Header, body
}

// response is an answer with its body read.
type response struct {
	status int
	header http.Header
	body   string
}

// plainClient asks for no compression on its own, so that a test reads an
// answer as the server sent it, and gives up after patience.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: patience}

// request sends method url with body (none when empty) and header pairs
// through plainClient; unlike get, it checks nothing against openapi.yml.
func request(t testing.TB, method, url, body string, header ...string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(got)}
}

var (
	specOnce sync.Once
	spec     *apispec.Spec
	specErr  error
)

// validateAgainstSpec checks every 2xx and 4xx body of a documented route
// that any end-to-end test receives against our openapi.yml.
func validateAgainstSpec(t testing.TB, rawURL string, resp *http.Response, body []byte) {
	t.Helper()
	specOnce.Do(func() { spec, specErr = apispec.Load("../openapi.yml") })
	if specErr != nil {
		t.Fatalf("openapi.yml: %v", specErr)
	}
	status := resp.StatusCode
	if (status < 200 || status >= 300) && (status < 400 || status >= 500) || status == http.StatusNotModified {
		return
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	path := u.RequestURI()
	if _, _, err := spec.Route(http.MethodGet, path); err != nil {
		return // not a documented route (unknown paths answer the generic 404)
	}
	if resp.Header.Get("Content-Encoding") != "" {
		return // compressed bodies are checked by the tests that ask for them
	}
	if err := spec.ValidateResponse(http.MethodGet, path, status, resp.Header, body); err != nil {
		t.Errorf("GET %s answered %d, which openapi.yml does not describe: %v", path, status, err)
	}
}
