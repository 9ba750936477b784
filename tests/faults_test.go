package tests

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/tests/testdb"
)

// faultRoutes is one request per API route, each answering 200 on restData.
var faultRoutes = []string{
	"/api/v1/topics/0.0.7/messages",
	"/api/v1/topics/0.0.7/messages/1",
	"/api/v1/topics/messages/1700000000.000000001",
	"/api/v1/topics/0.0.7",
	"/api/v1/schedules",
	"/api/v1/schedules/0.0.100",
}

const unavailableBody = `{"_status":{"messages":[{"message":"Service unavailable"}]}}`

// unavailableBodyOf is the documented 503 body of a route: the topic details
// route is rest-java's, with its reason phrase and an empty detail.
func unavailableBodyOf(route string) string {
	if route == "/api/v1/topics/0.0.7" {
		return `{"_status":{"messages":[{"message":"Service Unavailable","detail":""}]}}`
	}
	return unavailableBody
}

// TestDatabaseFaults stops and restarts a PostgreSQL server it owns under a
// running mirrorql and proves, for real:
//   - while the server is down every API route answers 503 with the
//     documented "Service unavailable" body, no slower than ten times the
//     slowest answer the same routes gave with the database up (measured
//     just before: a failing database fails fast), readiness answers 503
//     and liveness 200;
//   - the log says "database unavailable" once (not once per request) and
//     has no per-request error lines for the outage;
//   - once the server is back on the same port and data directory, every
//     route answers 200 again without restarting mirrorql, within ten times
//     what starting mirrorql took (a process with fresh sessions answering
//     readiness, measured at the test's start), and the log says
//     "database available" once.
func TestDatabaseFaults(t *testing.T) {
	cluster, w := migratedCluster(t)
	seedREST(t, w)

	drivers := []string{"pgx"}
	servers := map[string]*server{}
	started := map[string]time.Duration{}
	for _, driver := range drivers {
		// Default settings, response cache included: its version lookup
		// meets the outage first and answers the same 503.
		binary(t) // built before the start is timed
		start := time.Now()
		servers[driver] = startServer(t, cluster.URL(), "MIRRORQL_DB_DRIVER="+driver)
		started[driver] = time.Since(start)
	}
	// The baseline: the same requests (three rounds, and the GraphQL one)
	// with the database up, on this machine as loaded as it is now.
	var slowestUp time.Duration
	for _, driver := range drivers {
		s := servers[driver]
		for round := 0; round < 3; round++ {
			for _, r := range faultRoutes {
				start := time.Now()
				status, _, body := get(t, s.URL+r)
				slowestUp = max(slowestUp, time.Since(start))
				if status != http.StatusOK {
					t.Fatalf("%s %s before the outage: %d %s", driver, r, status, body)
				}
			}
		}
		start := time.Now()
		if status, body := postGraphQL(t, s.URL, `{"query":"{ topic(id: \"0.0.7\") { __typename } }"}`); status != http.StatusOK {
			t.Fatalf("%s GraphQL before the outage: %d %s", driver, status, body)
		}
		slowestUp = max(slowestUp, time.Since(start))
	}
	// A request that meets a stopped server is refused at once; ten times
	// the slowest with the database up leaves the machine's jitter room and
	// still sets apart a request that waits for a connect or statement
	// timeout where the machine is quiet enough to tell.
	fast := 10 * slowestUp
	t.Logf("with the database up the slowest request took %s: %s is fast with it down", slowestUp.Round(time.Microsecond), fast.Round(time.Millisecond))

	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var slowest time.Duration
	for _, driver := range drivers {
		s := servers[driver]
		for round := 0; round < 3; round++ {
			for _, r := range faultRoutes {
				start := time.Now()
				status, hdr, body := get(t, s.URL+r)
				took := time.Since(start)
				slowest = max(slowest, took)
				if want := unavailableBodyOf(r); status != http.StatusServiceUnavailable || string(body) != want {
					t.Errorf("%s %s with the database down: %d %s, want 503 %s", driver, r, status, body, want)
				}
				if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("%s %s: content-type %q", driver, r, ct)
				}
				if took > fast {
					t.Errorf("%s %s with the database down took %s, want < %s", driver, r, took, fast)
				}
			}
		}
		// The GraphQL face: the same outage as a GraphQL error, as fast.
		start := time.Now()
		status, body := postGraphQL(t, s.URL, `{"query":"{ topic(id: \"0.0.7\") { __typename } }"}`)
		if took := time.Since(start); took > fast {
			t.Errorf("%s GraphQL with the database down took %s, want < %s", driver, took, fast)
		}
		if status >= 500 && status != http.StatusServiceUnavailable || !strings.Contains(string(body), `"Service unavailable"`) {
			t.Errorf("%s GraphQL with the database down: %d %s", driver, status, body)
		}
		if status, _, body := get(t, s.URL+"/health/readiness"); status != http.StatusServiceUnavailable {
			t.Errorf("%s readiness with the database down: %d %s, want 503", driver, status, body)
		}
		if status, _, body := get(t, s.URL+"/health/liveness"); status != http.StatusOK {
			t.Errorf("%s liveness with the database down: %d %s, want 200", driver, status, body)
		}
	}
	t.Logf("outage: %d requests checked in %s, slowest %s", len(drivers)*3*len(faultRoutes),
		time.Since(stopped).Round(time.Millisecond), slowest.Round(time.Microsecond))

	if err := cluster.StartServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, driver := range drivers {
		wg.Add(1)
		go func(driver string) {
			defer wg.Done()
			took, err := recovery(servers[driver].URL, patience)
			if err != nil {
				t.Errorf("%s did not recover: %v", driver, err)
				return
			}
			t.Logf("%s: every route answers 200 again %s after the database accepted connections (mirrorql started in %s)",
				driver, took.Round(time.Millisecond), started[driver].Round(time.Millisecond))
			// Recovering opens fresh sessions on a server that has just
			// started, as mirrorql's own start did on a warm one: ten
			// times that leaves room for the cold server and the passes
			// that still failed, and is still short of a retry timer's
			// seconds where the machine is quiet enough to tell.
			if limit := 10 * started[driver]; took > limit {
				t.Errorf("%s recovered %s after the database was back, want < %s (ten times mirrorql's start)", driver, took, limit)
			}
		}(driver)
	}
	wg.Wait()

	for _, driver := range drivers {
		logs := servers[driver].logs.String()
		if n := strings.Count(logs, "database unavailable"); n != 1 {
			t.Errorf("%s logged %q %d times, want once per outage:\n%s", driver, "database unavailable", n, logs)
		}
		if n := strings.Count(logs, "database available"); n != 2 { // at start-up and after the outage
			t.Errorf("%s logged %q %d times, want 2 (start-up, recovery):\n%s", driver, "database available", n, logs)
		}
		if strings.Contains(logs, "request failed") {
			t.Errorf("%s logged the outage per request:\n%s", driver, logs)
		}
	}
}

// recovery polls every route (and readiness) until all answer 200 in one
// pass, and returns how long that took from now. A request that gets no
// answer within patience is a failed pass (a hang, not a slow answer).
func recovery(base string, within time.Duration) (time.Duration, error) {
	start := time.Now()
	client := &http.Client{Timeout: patience}
	var last string
	for time.Since(start) < within {
		ok := true
		for _, r := range append([]string{"/health/readiness"}, faultRoutes...) {
			resp, err := client.Get(base + r)
			if err != nil {
				ok, last = false, err.Error()
				break
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				ok, last = false, r+": "+resp.Status+" "+string(body)
				break
			}
		}
		if ok {
			return time.Since(start), nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, errors.New("still failing after " + within.String() + ": " + last)
}

// TestDatabaseUnreachable points mirrorql at an address that accepts TCP
// connections and never answers (a black hole, as a hung server or a lost
// network path looks): API routes still answer 503 with the documented body
// once the 1 s connect timeout has passed, sooner than two connect attempts
// as the test's own attempt at the same address took (measured just before),
// beside ten times what a request that needs no database took on the same
// server; readiness 503, liveness 200.
func TestDatabaseUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	dbURL := "postgres://postgres@" + l.Addr().String() + "/mirror_node?sslmode=disable"
	for _, driver := range []string{"pgx"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			// Cache on: a failed version lookup is the answer, so
			// GET /api/v1/schedules waits out the connect timeout once.
			const connectTimeout = time.Second
			s := startLiveServer(t, dbURL, "MIRRORQL_DB_DRIVER="+driver, "MIRRORQL_DB_CONNECT_TIMEOUT="+connectTimeout.String())
			// The machine's pace: one connect attempt at the black hole,
			// as the service makes it (its timer and error path, not just
			// the timeout), and as many liveness requests as there are
			// routes, the same server, no database.
			cfg, err := pgx.ParseConfig(dbURL)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnectTimeout = connectTimeout
			start := time.Now()
			if c, err := pgx.ConnectConfig(context.Background(), cfg); err == nil {
				_ = c.Close(context.Background())
				t.Fatal("a connection to the black hole succeeded")
			}
			attempt := time.Since(start)
			var slowest time.Duration
			for range faultRoutes {
				start := time.Now()
				get(t, s.URL+"/health/liveness")
				slowest = max(slowest, time.Since(start))
			}
			// Sooner than a second attempt would end: one attempt per
			// request, however slow the machine makes each.
			limit := 2*attempt + 10*slowest
			t.Logf("a connect attempt at the black hole took %s, the slowest liveness request %s: limit %s", attempt, slowest, limit)
			for _, r := range faultRoutes {
				start := time.Now()
				status, _, body := get(t, s.URL+r)
				took := time.Since(start)
				if want := unavailableBodyOf(r); status != http.StatusServiceUnavailable || string(body) != want {
					t.Errorf("%s: %d %s, want 503 %s", r, status, body, want)
				}
				if took > limit {
					t.Errorf("%s took %s, want about %s (the connect timeout; limit %s: two attempts of %s, ten requests without the database of %s)",
						r, took, connectTimeout, limit, attempt, slowest)
				}
			}
			if status, _, _ := get(t, s.URL+"/health/readiness"); status != http.StatusServiceUnavailable {
				t.Errorf("readiness: %d, want 503", status)
			}
			if status, _, _ := get(t, s.URL+"/health/liveness"); status != http.StatusOK {
				t.Errorf("liveness: %d, want 200", status)
			}
			if logs := s.logs.String(); strings.Count(logs, "database unavailable") != 1 || strings.Contains(logs, "request failed") {
				t.Errorf("want one %q line and no per-request errors:\n%s", "database unavailable", logs)
			}
		})
	}
}

// startLiveServer is startServer for a database that is not there: it waits
// for liveness instead of readiness.
func startLiveServer(t *testing.T, dbURL string, env ...string) *server {
	t.Helper()
	return launch(t, "/health/liveness", dbURL, env...)
}

// TestNoSecretInLogs runs the binary with database URLs that hold a password
// and fail in every way we can provoke (unparseable, bad option, nothing
// listening) and checks that the password appears nowhere in what it prints.
func TestNoSecretInLogs(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Pw"
	closed := freeAddr(t) // nothing listens there once freeAddr returns
	for _, driver := range []string{"pgx"} {
		for _, u := range []string{
			"postgres://mirror:" + secret + "@127.0.0.1:badport/mirror_node",
			"postgres://mirror:" + secret + "@" + closed + "/mirror_node?sslmode=bogus",
			"postgres://mirror@" + closed + "/mirror_node?password=" + secret + "&sslmode=bogus",
		} {
			for _, cmdName := range []string{"serve", "migrate"} {
				cmd := exec.Command(binary(t), cmdName)
				cmd.Env = append(os.Environ(), "MIRRORQL_DATABASE_URL="+u, "MIRRORQL_DB_DRIVER="+driver,
					"MIRRORQL_LISTEN="+freeAddr(t), "MIRRORQL_GRPC_LISTEN=")
				out, err := cmd.CombinedOutput()
				if err == nil {
					t.Errorf("%s %s with %s: exit 0", driver, cmdName, u)
				}
				if strings.Contains(string(out), secret) {
					t.Errorf("%s %s printed the password:\n%s", driver, cmdName, out)
				}
				if !strings.Contains(string(out), "xxxxx") && strings.Contains(string(out), "mirror:") {
					t.Errorf("%s %s: the URL is printed without its mask:\n%s", driver, cmdName, out)
				}
			}
		}
		// Serving with nothing listening: errors and state changes logged.
		u := "postgres://mirror:" + secret + "@" + closed + "/mirror_node?sslmode=disable"
		s := startLiveServer(t, u, "MIRRORQL_DB_DRIVER="+driver, "MIRRORQL_LOG_LEVEL=debug")
		for _, r := range append([]string{"/health/readiness"}, faultRoutes...) {
			get(t, s.URL+r)
		}
		if logs := s.logs.String(); strings.Contains(logs, secret) {
			t.Errorf("%s: the log holds the password:\n%s", driver, logs)
		} else if !strings.Contains(logs, "database unavailable") {
			t.Errorf("%s: no database unavailable line:\n%s", driver, logs)
		}
	}
}

func postGraphQL(t *testing.T, base, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestPoolAndStatementTimeout holds an exclusive lock on topic_message so
// every query on it blocks, floods mirrorql (pool of 3, statement timeout
// 2 s, request deadline 3 s) with 60 concurrent requests, and proves that:
//   - the pool never exceeds its size: until the first request deadline,
//     pg_stat_activity (sampled every 20 ms) never shows more than 3 of its
//     connections; afterwards, when requests give their queries up, at most
//     twice that for a moment, and 3 or fewer again while the lock is still
//     held (the server ends abandoned queries itself:
//     client_connection_check_interval, PostgreSQL 14+), so no pile-up;
//   - the statement timeout cuts the blocked queries (some requests answer
//     after 2 s and before their 3 s deadline) and the deadline the
//     requests queued for a connection: every request answers 503 with the
//     documented body within the deadline plus ten times the slowest of the
//     same burst of 60 answered before the lock (measured first: the same
//     routes, queueing for the same pool), none hangs;
//   - a statement timeout or a deadline is not an outage: no "database
//     unavailable" line;
//   - once the lock is gone the same routes answer 200 at once.
func TestPoolAndStatementTimeout(t *testing.T) {
	dbURL, b := testdb.New(t)
	seedREST(t, b)
	const app, pool = "mirrorql_pool_test", 3
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	ctx := context.Background()
	var version int
	if err := b.NewRaw("SELECT current_setting('server_version_num')::int").Scan(ctx, &version); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := b.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()", app).Scan(ctx, &n); err != nil {
			t.Errorf("pg_stat_activity: %v", err)
		}
		return n
	}
	for _, driver := range []string{"pgx"} {
		t.Run(driver, func(t *testing.T) {
			const statementTimeout, deadline = 2 * time.Second, 3 * time.Second
			s := startServer(t, dbURL+sep+"application_name="+app, "MIRRORQL_DB_DRIVER="+driver,
				"MIRRORQL_DB_POOL_SIZE=3", "MIRRORQL_DB_STATEMENT_TIMEOUT="+statementTimeout.String(),
				"MIRRORQL_REQUEST_TIMEOUT="+deadline.String(), "MIRRORQL_CACHE_ENABLED=false")
			routes := []string{"/api/v1/topics/0.0.7/messages", "/api/v1/topics/0.0.7/messages/1",
				"/api/v1/topics/messages/1700000000.000000001"}
			// The machine's pace for the burst below: the same 60
			// concurrent requests, answered before the lock, through the
			// same pool.
			slack := func() time.Duration {
				var mu sync.Mutex
				var slowest time.Duration
				var wg sync.WaitGroup
				for i := range 60 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						t0 := time.Now()
						if status, _, body := get(t, s.URL+routes[i%3]); status != http.StatusOK {
							t.Errorf("%s before the lock: %d %s", routes[i%3], status, body)
						}
						mu.Lock()
						slowest = max(slowest, time.Since(t0))
						mu.Unlock()
					}()
				}
				wg.Wait()
				return 10 * slowest
			}()
			tx, err := b.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "LOCK TABLE topic_message IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()

			start := time.Now()
			var (
				mu                sync.Mutex
				maxEarly, maxLate int
				done              = make(chan struct{})
				sampled           = make(chan struct{})
				durations         []time.Duration
				statuses          = map[int]int{}
			)
			go func() {
				defer close(sampled)
				for {
					n := count()
					// Taken once the sample is: it was made no later.
					// Every request's deadline runs from its arrival,
					// after start, so a sample made before start plus the
					// deadline precedes them all, however late the
					// requests went out.
					at := time.Since(start)
					mu.Lock()
					if at < deadline {
						maxEarly = max(maxEarly, n)
					} else {
						maxLate = max(maxLate, n)
					}
					mu.Unlock()
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			var wg sync.WaitGroup
			for i := 0; i < 60; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					r := routes[i%3]
					t0 := time.Now()
					status, _, body := get(t, s.URL+r)
					took := time.Since(t0)
					mu.Lock()
					statuses[status]++
					durations = append(durations, took)
					mu.Unlock()
					if status != http.StatusServiceUnavailable || string(body) != unavailableBody {
						t.Errorf("%s while blocked: %d %s, want 503", r, status, body)
					}
				}(i)
			}
			wg.Wait()
			// Abandoned queries must be gone, the lock still held: they
			// would block on it for good. How soon is the server's check
			// interval and this machine's pace; the wait only catches
			// queries that stay.
			settled := time.Now()
			after := count()
			for after > pool && time.Since(settled) < patience {
				time.Sleep(20 * time.Millisecond)
				after = count()
			}
			settle := time.Since(settled)
			close(done)
			<-sampled
			_ = tx.Rollback()

			sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
			// Answered through the statement timeout: the client's clock
			// runs from before the server's, so an answer under the
			// deadline by it came before the deadline, and one the
			// statement timeout cut came no sooner than that timeout.
			cut := 0
			for _, d := range durations {
				if d >= statementTimeout && d < deadline {
					cut++
				}
			}
			t.Logf("60 blocked requests: statuses %v; %d cut by the statement timeout; fastest %s, slowest %s (slack %s); "+
				"at most %d connections before the first deadline, %d after; %d within %s of the last answer",
				statuses, cut, durations[0].Round(time.Millisecond), durations[len(durations)-1].Round(time.Millisecond),
				slack.Round(time.Millisecond), maxEarly, maxLate, after, settle.Round(time.Millisecond))
			if maxEarly > pool || maxEarly == 0 {
				t.Errorf("pg_stat_activity showed %d connections of a pool of %d before any deadline", maxEarly, pool)
			}
			if maxLate > 2*pool {
				t.Errorf("pg_stat_activity showed %d connections of a pool of %d: a pile-up", maxLate, pool)
			}
			if version >= 140000 && after > pool {
				t.Errorf("abandoned queries still ran %s after the last answer: %d connections of a pool of %d", settle, after, pool)
			}
			if cut == 0 {
				t.Errorf("no request was answered through the 2 s statement timeout")
			}
			if slowest := durations[len(durations)-1]; slowest > deadline+slack {
				t.Errorf("a request took %s, past its %s deadline and the machine's slack (%s)", slowest, deadline, slack)
			}
			for _, r := range faultRoutes {
				if status, _, body := get(t, s.URL+r); status != http.StatusOK {
					t.Errorf("%s after the lock: %d %s", r, status, body)
				}
			}
			if logs := s.logs.String(); strings.Contains(logs, "database unavailable") {
				t.Errorf("a statement timeout or a deadline was logged as an outage:\n%s", logs)
			}
		})
	}
}
