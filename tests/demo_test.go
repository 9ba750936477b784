package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mirrorql/tests/testdb"
	"mirrorql/tools/pgcluster"
)

// demoProcess is a running `mirrorql demo`.
type demoProcess struct {
	cmd    *exec.Cmd
	out    *lockedBuffer // stdout: what the demo says
	logs   *lockedBuffer // stderr: the logs
	base   string
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited is closed
}

// startDemo runs `mirrorql demo` with the environment less every MIRRORQL_
// variable, plus env, and waits until it serves (at most 60 s).
func startDemo(t *testing.T, env ...string) (*demoProcess, time.Duration) {
	t.Helper()
	return startDemoArgs(t, nil, env...)
}

// startDemoArgs is startDemo with the demo's flags (-layout).
func startDemoArgs(t *testing.T, args []string, env ...string) (*demoProcess, time.Duration) {
	t.Helper()
	addr := freeAddr(t)
	return launchPersonal(t, "demo", args, addr, append([]string{"MIRRORQL_LISTEN=" + addr, "MIRRORQL_GRPC_LISTEN="}, env...)...)
}

// bannerBase is the base URL in a banner's GraphQL line, printed by the demo
// and local-network whatever else they print.
var bannerBase = regexp.MustCompile(`(?m)^  GraphQL\s+(http://[^/\s]+)/graphql `)

// launchPersonal runs `mirrorql <command> args` (demo, local-network) with the
// environment less every MIRRORQL_ variable, plus text logs and env, and
// waits until it serves (at most 60 s) at addr, or, when addr is empty, at
// the address its banner gives.
func launchPersonal(t *testing.T, command string, args []string, addr string, env ...string) (*demoProcess, time.Duration) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{command}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MIRRORQL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "MIRRORQL_LOG_FORMAT=text")
	cmd.Env = append(cmd.Env, env...)
	d := &demoProcess{cmd: cmd, out: &lockedBuffer{}, logs: &lockedBuffer{}, exited: make(chan struct{})}
	if addr != "" {
		d.base = "http://" + addr
	}
	cmd.Stdout, cmd.Stderr = d.out, d.logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() {
		select {
		case <-d.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-d.exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
			}
		}
		if t.Failed() {
			t.Logf("%s stdout:\n%s\n%s stderr:\n%s", command, d.out.String(), command, d.logs.String())
		}
	})
	// The demo starts a cluster and seeds it: seconds, many more on a busy
	// machine; the bound only catches a demo that never gets ready.
	deadline := start.Add(patience)
	for {
		if d.base == "" {
			if m := bannerBase.FindStringSubmatch(d.out.String()); m != nil {
				d.base = m[1]
			}
		}
		if d.base != "" {
			if resp, err := http.Get(d.base + "/health/readiness"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		select {
		case <-d.exited:
			t.Fatalf("%s exited before it was ready: %v\nstdout:\n%s\nstderr:\n%s", command, d.err, d.out.String(), d.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %s", command, patience)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return d, time.Since(start)
}

// stop sends SIGTERM and waits for a clean exit.
func (d *demoProcess) stop(t *testing.T) {
	t.Helper()
	began := time.Now()
	defer func() { t.Logf("demo stopped in %v", time.Since(began).Round(time.Millisecond)) }()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.exited:
		if d.err != nil {
			t.Fatalf("demo exit after SIGTERM: %v", d.err)
		}
	case <-time.After(patience):
		t.Fatalf("demo did not exit within %s of SIGTERM", patience)
	}
}

var (
	demoCluster = regexp.MustCompile(`PostgreSQL pid (\d+), directory (\S+), database (\S+)`)
	demoLink    = regexp.MustCompile(`(?m)^\s+(?:\w[\w ]*?\s+)?(http://\S+)`)
)

func TestDemo(t *testing.T) {
	t.Parallel()
	if _, err := pgcluster.FindBinaries(); err != nil {
		t.Fatalf("the demo needs PostgreSQL's server binaries: %v", err)
	}
	d, took := startDemo(t)
	t.Logf("demo ready %v after start (binary already built)", took.Round(time.Millisecond))

	m := demoCluster.FindStringSubmatch(d.out.String())
	if m == nil {
		t.Fatalf("the demo did not say its cluster's pid and directory:\n%s", d.out.String())
	}
	pid, _ := strconv.Atoi(m[1])
	dir := m[2]
	if pid <= 0 || !processAlive(pid) {
		t.Fatalf("postgres pid %d not running", pid)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("cluster directory: %v", err)
	}

	// Every link the demo prints works.
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "/api/v1/docs") })
	links := checkBannerLinks(t, d.out.String())
	if len(links) < 8 {
		t.Fatalf("the demo printed %d links:\n%s", len(links), d.out.String())
	}
	if !strings.HasSuffix(links[0], "/dashboard") {
		t.Errorf("the first link is %s, want the dashboard", links[0])
	}

	// REST answers with the seeded data.
	status, _, body := get(t, d.base+"/api/v1/topics/0.0.2001/messages?limit=3")
	var msgs struct {
		Messages []struct {
			TopicID        string `json:"topic_id"`
			SequenceNumber int64  `json:"sequence_number"`
		} `json:"messages"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &msgs) != nil || len(msgs.Messages) != 3 ||
		msgs.Messages[0].TopicID != "0.0.2001" || msgs.Messages[0].SequenceNumber != 1 {
		t.Errorf("messages of 0.0.2001: %d %s", status, body)
	}
	status, _, body = get(t, d.base+"/api/v1/schedules?limit=2")
	var scheds struct {
		Schedules []struct {
			ScheduleID string `json:"schedule_id"`
		} `json:"schedules"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &scheds) != nil || len(scheds.Schedules) != 2 ||
		scheds.Schedules[0].ScheduleID != "0.0.3001" {
		t.Errorf("schedules: %d %s", status, body)
	}
	if status, _, body = get(t, d.base+"/api/v1/topics/0.0.2001"); status != http.StatusOK || !strings.Contains(string(body), `"topic_id":"0.0.2001"`) {
		t.Errorf("topic 0.0.2001: %d %s", status, body)
	}

	// GraphQL, once the face is mounted.
	resp, err := http.Post(d.base+"/graphql", "application/json",
		strings.NewReader(`{"query":"{ topics(first:1){ nodes { id } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	var gql struct {
		Data struct {
			Topics struct {
				Nodes []struct{ ID string } `json:"nodes"`
			} `json:"topics"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&gql)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		t.Log("/graphql is not mounted yet: GraphQL part skipped")
	case resp.StatusCode != http.StatusOK || err != nil || len(gql.Data.Topics.Nodes) != 1 || gql.Data.Topics.Nodes[0].ID != "0.0.2001":
		t.Errorf("GraphQL topics: %d %v %+v", resp.StatusCode, err, gql)
	}

	checkLiveTopic(t, d)

	d.stop(t)
	if processAlive(pid) {
		t.Errorf("postgres (pid %d) still runs after the demo exited", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster directory %s still there (%v)", dir, err)
	}
	if !strings.Contains(d.out.String(), "stopped PostgreSQL") {
		t.Errorf("the demo did not say it stopped the cluster:\n%s", d.out.String())
	}
	// The live topic's writer stops before the cluster does, so not even
	// shutting down makes a write fail.
	if strings.Contains(d.logs.String(), "cannot append to the live topic") {
		t.Errorf("a write to the live topic failed:\n%s", d.logs.String())
	}
}

// TestDemoBusyPort runs serve and the demo where an address set by the user
// is taken: each fails at once, saying which variable moves it. (The demo's
// own default addresses move instead: TestDemoDefaultPortsTaken.)
func TestDemoBusyPort(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, cmdName string, env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary(t), cmdName)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "MIRRORQL_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "MIRRORQL_GRPC_LISTEN=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("%s on a busy port: %v (want exit status 1)\n%s", cmdName, err, out)
		}
		return string(out)
	}
	hint := ": bind: address already in use (set MIRRORQL_LISTEN to another address, e.g. MIRRORQL_LISTEN=127.0.0.1:9090)"

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, c := range []string{"serve", "demo"} {
		t.Run(c, func(t *testing.T) {
			// A database nobody answers at: serve and the demo must fail on the port first.
			out := run(t, c, "MIRRORQL_LISTEN="+addr, "MIRRORQL_DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable")
			if !strings.Contains(out, "listen tcp "+addr+hint) {
				t.Errorf("%s on the busy %s said:\n%s", c, addr, out)
			}
		})
	}

	// The SDKs' address, set by the user and taken, fails the demo as well.
	t.Run("demo gRPC", func(t *testing.T) {
		out := run(t, "demo", "MIRRORQL_LISTEN="+freeAddr(t), "MIRRORQL_GRPC_LISTEN="+addr,
			"MIRRORQL_DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable")
		if want := "listen tcp " + addr + ": bind: address already in use (set MIRRORQL_GRPC_LISTEN"; !strings.Contains(out, want) {
			t.Errorf("the demo on the busy %s (MIRRORQL_GRPC_LISTEN) said:\n%s", addr, out)
		}
	})
}

// holdPort keeps addr busy for the test's lifetime with an HTTP server that
// answers every request 503, so that a link that reached it instead of
// mirrorql fails. When another program holds addr already, that serves as
// well: the port is taken either way.
func holdPort(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		t.Logf("%s is held by another program already", addr)
		return
	case err != nil:
		t.Fatalf("hold %s: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not mirrorql: a program holding the port", http.StatusServiceUnavailable)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

var (
	demoGRPCLine = regexp.MustCompile(`(?m)^  gRPC\s+(\S+)  \(the SDKs' ConsensusService; also on (\S+)\)$`)
	demoGRPCurl  = regexp.MustCompile(`(?m)^\s+grpcurl -plaintext -d '([^']*)' (\S+) com\.hedera\.mirror\.api\.proto\.ConsensusService/subscribeTopic$`)
)

// TestDemoDefaultPortsTaken runs the demo as `make run` does, no address set,
// where its two default ports are taken, as on a machine that runs a local
// Hiero network (its gRPC on 5600, its proxy or explorer on 8080). The
// demo comes up on free ports, says so, and every link of its banner
// answers; the gRPC address of its banner and of its grpcurl line serves
// the SDKs' subscribeTopic, the live topic's messages included.
func TestDemoDefaultPortsTaken(t *testing.T) {
	t.Parallel()
	if _, err := pgcluster.FindBinaries(); err != nil {
		t.Fatalf("the demo needs PostgreSQL's server binaries: %v", err)
	}
	holdPort(t, "127.0.0.1:8080")
	holdPort(t, "127.0.0.1:5600")
	d, _ := launchPersonal(t, "demo", nil, "")
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "/api/v1/docs") })
	out := d.out.String()
	for _, taken := range []string{"127.0.0.1:8080", "127.0.0.1:5600"} {
		if !strings.Contains(out, "mirrorql demo: "+taken+" is taken: listening on 127.0.0.1:") {
			t.Errorf("the demo did not say it moved off %s:\n%s", taken, out)
		}
	}
	if strings.HasSuffix(d.base, ":8080") {
		t.Fatalf("the banner's links are on %s, the taken port", d.base)
	}
	if links := checkBannerLinks(t, out); len(links) < 8 {
		t.Errorf("the demo printed %d links:\n%s", len(links), out)
	}

	g := demoGRPCLine.FindStringSubmatch(out)
	c := demoGRPCurl.FindStringSubmatch(out)
	if g == nil || c == nil {
		t.Fatalf("no gRPC line or no grpcurl command in the banner:\n%s", out)
	}
	if g[1] != c[2] || strings.HasSuffix(g[1], ":5600") || "http://"+g[2] != d.base {
		t.Errorf("gRPC on %s (also on %s), grpcurl to %s: want one address other than :5600, and also on %s", g[1], g[2], c[2], d.base)
	}
	var q struct {
		TopicID struct {
			ShardNum, RealmNum, TopicNum int64
		}
	}
	if err := json.Unmarshal([]byte(c[1]), &q); err != nil || q.TopicID.TopicNum == 0 {
		t.Fatalf("grpcurl's request %s: %v", c[1], err)
	}
	query := fromEpoch(topicQuery(q.TopicID.TopicNum))
	query.TopicID.ShardNum, query.TopicID.RealmNum = q.TopicID.ShardNum, q.TopicID.RealmNum
	msgs := takeTopic(t, grpcGo(grpcConn(t, c[2]))(t, query), 3, patience)
	consecutiveTopic(t, "the live topic over the banner's gRPC address", msgs, 1)
	d.stop(t)
}

func TestDemoOnGivenDatabase(t *testing.T) {
	t.Parallel()
	url, b := testdb.Empty(t) // not even migrated
	d, _ := startDemo(t, "MIRRORQL_DATABASE_URL="+url)
	if demoCluster.MatchString(d.out.String()) {
		t.Fatal("the demo started a cluster although MIRRORQL_DATABASE_URL is set")
	}
	if status, _, body := get(t, d.base+"/api/v1/topics/0.0.2002/messages/1"); status != http.StatusOK {
		t.Errorf("seeded message: %d %s", status, body)
	}
	// Someone else's database gets no live topic: nothing is written after
	// seeding, for several of the live writer's intervals.
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "is up") })
	if out := d.out.String(); strings.Contains(out, "live topic") || strings.Contains(out, "curl -N") {
		t.Errorf("the demo offers a live topic on a database of MIRRORQL_DATABASE_URL:\n%s", out)
	}
	countRows := func() (n int64) {
		err := b.NewRaw("select (select count(*) from topic_message) + (select count(*) from transaction)").
			Scan(context.Background(), &n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countRows()
	// An absence is watched for a span (3 s, several writer intervals): the
	// span is the scenario, the 100 ms sleeps only space the looks.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if n := countRows(); n != before {
			t.Fatalf("the demo wrote to the database of MIRRORQL_DATABASE_URL: %d rows, %d after seeding", n, before)
		}
	}
	d.stop(t)
	var n int
	if err := b.NewRaw("select count(*) from topic_message").Scan(context.Background(), &n); err != nil || n == 0 {
		t.Fatalf("topic messages: %d, %v", n, err)
	}

	// A second run finds the data and leaves it alone.
	d, _ = startDemo(t, "MIRRORQL_DATABASE_URL="+url)
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "is up") })
	if !strings.Contains(d.out.String(), "not seeding") {
		t.Errorf("second run:\n%s", d.out.String())
	}
	d.stop(t)
	var again int
	_ = b.NewRaw("select count(*) from topic_message").Scan(context.Background(), &again)
	if again != n {
		t.Errorf("topic messages %d after the second run, %d before", again, n)
	}
}

func TestSeedCommand(t *testing.T) {
	t.Parallel()
	url, b := testdb.Empty(t)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary(t), append([]string{"seed"}, args...)...)
		cmd.Env = append(os.Environ(), "MIRRORQL_DATABASE_URL="+url)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	count := func(table string) int {
		var n int
		if err := b.NewRaw("select count(*) from "+table).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	out, err := run("--topics", "3", "--messages-per-topic", "7", "--hot-topic-messages", "50", "--schedules", "4", "--seed", "9")
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	if got := [3]int{count("topic"), count("topic_message"), count("schedule")}; got != [3]int{3, 50 + 2*7, 4} {
		t.Errorf("topic, topic_message, schedule = %v\n%s", got, out)
	}
	if out, err = run("--topics", "3"); err == nil || !strings.Contains(out, "--reset") {
		t.Errorf("seeding over a data set: %v\n%s", err, out)
	}
	if out, err = run("--topics", "2", "--messages-per-topic", "1", "--schedules", "1", "--reset"); err != nil {
		t.Fatalf("seed --reset: %v\n%s", err, out)
	}
	if got := [3]int{count("topic"), count("topic_message"), count("schedule")}; got != [3]int{2, 2, 1} {
		t.Errorf("after --reset: %v", got)
	}
	var exit *exec.ExitError
	if out, err = run("--topics", "x"); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("bad flag: %v\n%s", err, out)
	}
}

var (
	demoLiveTopic    = regexp.MustCompile(`(?m)^  live topic\s+(\d+\.\d+\.\d+) `)
	demoLiveExplorer = regexp.MustCompile(`(?m)^\s+explorer\s+(http://\S+)$`)
	demoLiveCurl     = regexp.MustCompile(`(?m)^\s+curl (-N .*)$`)
)

// checkLiveTopic checks what the demo's banner says about its live topic, and
// that the topic grows, a whole message with its transaction at a time.
func checkLiveTopic(t *testing.T, d *demoProcess) {
	t.Helper()
	out := d.out.String()
	m := demoLiveTopic.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the demo did not name its live topic:\n%s", out)
	}
	topic := m[1]
	subscription := `subscription { topicMessages(topicId: "` + topic +
		`") { sequenceNumber consensusTimestamp message(encoding: UTF8) } }`

	// The explorer link opens the explorer with the subscription in it (the
	// link itself is fetched with the others).
	if m := demoLiveExplorer.FindStringSubmatch(out); m == nil {
		t.Errorf("no explorer link for the live topic:\n%s", out)
	} else if u, err := url.Parse(m[1]); err != nil || u.Scheme+"://"+u.Host+u.Path != d.base+"/graphql" ||
		u.Query().Get("query") != subscription {
		t.Errorf("explorer link %s (%v): want %s/graphql with query %s", m[1], err, d.base, subscription)
	}

	// The curl command means, to a POSIX shell, what docs/running.md says: the
	// shell's own printf shows how it splits and unquotes the words.
	m = demoLiveCurl.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no curl command for the live topic:\n%s", out)
	}
	words, err := exec.Command("sh", "-c", `printf '%s\0' `+m[1]).Output()
	if err != nil {
		t.Fatalf("sh cannot parse the curl command %q: %v", m[1], err)
	}
	args := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
	request, _ := json.Marshal(map[string]string{"query": subscription})
	want := []string{"-N", "-H", "Content-Type: application/json", "-H", "Accept: text/event-stream",
		"--data", string(request), d.base + "/graphql"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("curl %s: words (-want +got):\n%s", m[1], diff)
	}

	// The topic grows by whole messages, each with its transaction.
	type message struct {
		ConsensusTimestamp string `json:"consensus_timestamp"`
		SequenceNumber     int64  `json:"sequence_number"`
		TopicID            string `json:"topic_id"`
		ChunkInfo          *struct {
			Number int `json:"number"`
			Total  int `json:"total"`
		} `json:"chunk_info"`
	}
	newest := func() message {
		status, _, body := get(t, d.base+"/api/v1/topics/"+topic+"/messages?order=desc&limit=1")
		var page struct{ Messages []message }
		if status != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Messages) != 1 {
			t.Fatalf("newest message of %s: %d %s", topic, status, body)
		}
		return page.Messages[0]
	}
	first := newest()
	var last message
	waitFor(t, func() bool { last = newest(); return last.SequenceNumber >= first.SequenceNumber+2 })
	t.Logf("live topic %s: sequence number %d, then %d", topic, first.SequenceNumber, last.SequenceNumber)
	// The by-timestamp route joins the transaction table.
	status, _, body := get(t, d.base+"/api/v1/topics/messages/"+last.ConsensusTimestamp)
	var byTimestamp message
	if status != http.StatusOK || json.Unmarshal(body, &byTimestamp) != nil ||
		byTimestamp.TopicID != topic || byTimestamp.SequenceNumber != last.SequenceNumber {
		t.Errorf("newest message by its timestamp %s: %d %s", last.ConsensusTimestamp, status, body)
	}
	// No gap in the sequence numbers, and no chunk group cut short.
	status, _, body = get(t, fmt.Sprintf("%s/api/v1/topics/%s/messages?sequencenumber=gte:%d&limit=100",
		d.base, topic, first.SequenceNumber))
	var page struct{ Messages []message }
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Messages) < 3 {
		t.Fatalf("messages of %s from %d: %d %s", topic, first.SequenceNumber, status, body)
	}
	for i, msg := range page.Messages {
		if msg.SequenceNumber != first.SequenceNumber+int64(i) {
			t.Errorf("message %d of %s from %d has sequence number %d", i, topic, first.SequenceNumber, msg.SequenceNumber)
		}
	}
	if c := page.Messages[len(page.Messages)-1].ChunkInfo; c != nil && c.Number != c.Total {
		t.Errorf("the newest message of %s is chunk %d of %d", topic, c.Number, c.Total)
	}
}

// checkBannerLinks GETs every link of a banner as a browser asks (GraphQL
// then answers its explorer page), failing the test on any answer but 200,
// and returns the links.
func checkBannerLinks(t *testing.T, banner string) []string {
	t.Helper()
	var links []string
	for _, l := range demoLink.FindAllStringSubmatch(banner, -1) {
		links = append(links, l[1])
		req, _ := http.NewRequest(http.MethodGet, l[1], nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("printed link %s: %v", l[1], err)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("printed link %s: %d", l[1], resp.StatusCode)
		}
	}
	return links
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// waitFor waits for cond, which a working demo meets in moments: the bound
// only catches one that never does.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
