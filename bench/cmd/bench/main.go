// Command bench is the benchmark suite behind `make bench`: it
// creates its own databases, loads them with the seed data set, starts the
// built `mirrorql serve`, drives every route at 32 and 64 connections with
// the loadgen package, measures the pgbench floor in the same run, and
// writes a summary into BENCHMARKS.md (between the generated markers) and
// the whole report into bench/results/latest.md.
//
//	go run ./bench/cmd/bench -bin bin/mirrorql
//
// With -soak <duration> it runs the soak benchmark of `make soak` instead
// (soak.go): one service, mixed routes at saturation, sampled over
// time, with its own section of BENCHMARKS.md. With -live it runs the live
// topic messages benchmark of `make bench-live` (live.go): GraphQL
// subscriptions' latency, fan-out, poll statements and memory. With -scale
// it runs the mainnet-shaped benchmark of `make bench-scale` (scale.go):
// 50M messages in the v1 and v2 layouts against the 1M v1 data set. With
// -citus it runs `make bench-citus` (citus.go): the v2 layout on a Citus
// cluster beside plain v2 on the same messages.
//
// Everything it creates is its own: the databases mirrorql_bench and
// mirrorql_bench_small (and mirrorql_bench_live with -live, mirrorql_scale_*
// with -scale) on the local server (or on a throwaway cluster when no server
// answers), and the service process, stopped at the end.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/bench/loadgen"
	"mirrorql/tools/pgcluster"
	"mirrorql/tools/seed"
)

type flags struct {
	bin             string
	adminURL        string
	dbName          string
	smallName       string
	duration        time.Duration
	warmup          time.Duration
	conns           []int
	pool            int
	schedules       int
	reuse           bool
	floor           bool
	out             string
	results         string
	profile         bool
	skipSmall       bool
	routesOnly      string
	serviceEnv      []string
	profileTime     time.Duration
	scalingRounds   int
	scalingDuration time.Duration
	targetRounds    int
	targetDuration  time.Duration
	shortDuration   time.Duration
	cluster         bool
	sharedBuffers   string
	pgSettings      map[string]string // -pg-set: a throwaway cluster's server settings
	// soak mode (soak.go)
	soak         time.Duration
	soakInterval time.Duration
	soakData     string
	soakRuns     int
	soakCold     bool
}

func parseFlags() flags {
	var f flags
	var conns string
	flag.StringVar(&f.bin, "bin", "bin/mirrorql", "the built service")
	flag.StringVar(&f.adminURL, "admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"a database on the server to create the benchmark databases on; a throwaway cluster is started when it does not answer")
	flag.StringVar(&f.dbName, "db", "mirrorql_bench", "the 1,000,000-message database (dropped and re-created)")
	flag.StringVar(&f.smallName, "small-db", "mirrorql_bench_small", "the 10,000-message database for the scaling check")
	flag.DurationVar(&f.duration, "duration", 8*time.Second, "measured window of each load phase")
	flag.DurationVar(&f.warmup, "warmup", time.Second, "unmeasured warm-up before each window")
	flag.StringVar(&conns, "conns", "32,64", "connection counts")
	flag.IntVar(&f.pool, "pool", 16, "MIRRORQL_DB_POOL_SIZE of the service")
	flag.IntVar(&f.schedules, "schedules", 20_000, "schedules in the large data set")
	flag.BoolVar(&f.floor, "floor", true, "measure the pgbench floor (off: quick comparisons of the service alone; the paired rounds run without it)")
	flag.BoolVar(&f.reuse, "reuse", false, "keep databases already seeded with the same options by an earlier run")
	flag.StringVar(&f.out, "out", "BENCHMARKS.md", "file whose generated section is replaced ('' to only print)")
	flag.StringVar(&f.results, "results", "bench/results", "directory of the whole reports, which -out links to ('' to put the whole report into -out)")
	flag.BoolVar(&f.profile, "profile", true, "also run the in-process CPU and allocation profiles (bench/handler benchmarks)")
	flag.DurationVar(&f.profileTime, "profile-time", 5*time.Second, "-benchtime of each profiled benchmark")
	flag.BoolVar(&f.skipSmall, "skip-scaling", false, "skip the 10,000-message scaling phases")
	flag.BoolVar(&f.cluster, "cluster", false, "use a throwaway cluster even when a server answers at -admin-url")
	flag.StringVar(&f.sharedBuffers, "shared-buffers", "256MB", "shared_buffers of a throwaway cluster")
	f.pgSettings = map[string]string{}
	flag.Func("pg-set", "`name=value`: a server setting of the throwaway cluster (repeatable, e.g. -pg-set max_locks_per_transaction=256); implies -cluster",
		func(kv string) error {
			name, value, ok := strings.Cut(kv, "=")
			if name = strings.TrimSpace(name); !ok || name == "" {
				return fmt.Errorf("want name=value, got %q", kv)
			}
			f.pgSettings[name] = strings.TrimSpace(value)
			return nil
		})
	flag.IntVar(&f.scalingRounds, "scaling-rounds", 3, "alternating 1M/10k rounds of each scaling route (medians are reported)")
	flag.DurationVar(&f.scalingDuration, "scaling-duration", 4*time.Second, "measured window of each scaling phase")
	flag.IntVar(&f.targetRounds, "target-rounds", 3, "paired rounds of the pgbench floor and the target routes (rounds.go; 0 for none)")
	flag.DurationVar(&f.targetDuration, "target-duration", 5*time.Second, "measured window of each phase of a paired round")
	flag.DurationVar(&f.shortDuration, "short-duration", 2*time.Second,
		"measured window of the short phases: the paired rounds' topic, schedule and activity phases (rounds.go: shortRound) and the activity route's scaling phases")
	flag.StringVar(&f.routesOnly, "routes", "", "comma-separated route names to run (default all)")
	flag.DurationVar(&f.soak, "soak", 0, "instead of the suite, the soak benchmark for this long (`make soak`): one service, mixed routes at saturation, sampled over time; implies -reuse")
	flag.DurationVar(&f.soakInterval, "soak-interval", 10*time.Second, "sampling interval of -soak")
	flag.StringVar(&f.soakData, "soak-data", "large", "data set of -soak: large (-db) or small (-small-db)")
	flag.IntVar(&f.soakRuns, "soak-runs", 1, "runs of -soak, each on a fresh service")
	flag.BoolVar(&f.soakCold, "soak-cold", false, "before each run of -soak, restart the throwaway cluster (-cluster) with its files dropped from the OS page cache: a cold database")
	var extra string
	flag.StringVar(&extra, "service-env", "", "extra MIRRORQL_* settings of the service, comma-separated NAME=value")
	flag.Parse()
	for _, kv := range strings.Split(extra, ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			f.serviceEnv = append(f.serviceEnv, kv)
		}
	}
	for _, s := range strings.Split(conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("bad -conns %q", conns)
		}
		f.conns = append(f.conns, n)
	}
	return f
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("bench: ")
	if file := os.Getenv(aloneEnv); file != "" {
		if err := serveAlone(file); err != nil {
			log.Fatal(err)
		}
		return
	}
	f := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if af.old != "" {
		if err := runAB(ctx, f, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	if cf.on {
		if err := runCitus(ctx, f); err != nil {
			log.Fatal(err)
		}
		return
	}
	if sf.on {
		if err := runScale(ctx, f); err != nil {
			log.Fatal(err)
		}
		return
	}
	if lf.on {
		if err := runLive(ctx, f); err != nil {
			log.Fatal(err)
		}
		return
	}
	if f.soak > 0 {
		if f.soakData != "large" && f.soakData != "small" {
			log.Fatalf("bad -soak-data %q", f.soakData)
		}
		if err := runSoak(ctx, f); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(ctx, f); err != nil {
		log.Fatal(err)
	}
}

// dataset is one seeded database.
type dataset struct {
	name  string
	url   string
	opts  seed.Options
	stats seed.Stats
	seedT time.Duration
	vacT  time.Duration
	size  string
	// the hot topic's history, read from the database once seeded: what
	// the activity route asks for
	window hotWindow
	// pre-seeded by an earlier run (-reuse)
	reused  bool
	seedCmd string
	seedOut string
}

func largeOptions(schedules int) seed.Options {
	o := seed.BenchmarkOptions()
	o.Schedules = schedules
	return o
}

func smallOptions() seed.Options {
	o := seed.BenchmarkOptions()
	o.MessagesPerTopic = 51 // 5,000 + 99·51 = 10,049 messages
	o.HotTopicMessages = 5_000
	return o
}

func (f flags) wants(name string) bool {
	if f.routesOnly == "" {
		return true
	}
	for _, n := range strings.Split(f.routesOnly, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

func ping(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	return c.Ping(ctx)
}

// dbURL is adminURL with another database.
func dbURL(adminURL, name string) (string, error) {
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name), nil
}

// prepare (re)creates the database, migrates it with the service binary,
// seeds it and vacuums it. With -reuse, a database whose comment records the
// same seed options is kept as it is.
func prepare(ctx context.Context, f flags, adminURL string, d *dataset) error {
	var err error
	if d.url, err = dbURL(adminURL, d.name); err != nil {
		return err
	}
	fingerprint := fmt.Sprintf("mirrorql bench seed %+v", d.opts)
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	ident := pgx.Identifier{d.name}.Sanitize()
	if f.reuse {
		var comment *string
		err := admin.QueryRow(ctx, `select shobj_description(oid, 'pg_database') from pg_database where datname = $1`, d.name).Scan(&comment)
		if err == nil && comment != nil && *comment == fingerprint {
			log.Printf("%s: reusing the database seeded by an earlier run", d.name)
			d.reused = true
			return d.describe(ctx)
		}
	}
	log.Printf("%s: creating", d.name)
	if _, err := admin.Exec(ctx, "drop database if exists "+ident+" with (force)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "create database "+ident); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, f.bin, "migrate")
	cmd.Env = serviceEnv(map[string]string{"MIRRORQL_DATABASE_URL": d.url})
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mirrorql migrate: %w\n%s", err, out)
	}
	t := time.Now()
	if hasSeedCommand(f.bin) {
		o := d.opts
		args := []string{"seed", "--topics", strconv.Itoa(o.Topics), "--messages-per-topic", strconv.Itoa(o.MessagesPerTopic),
			"--hot-topic-messages", strconv.Itoa(o.HotTopicMessages), "--schedules", strconv.Itoa(o.Schedules),
			"--seed", strconv.FormatInt(o.Seed, 10)}
		d.seedCmd = "mirrorql " + strings.Join(args, " ")
		cmd := exec.CommandContext(ctx, f.bin, args...)
		cmd.Env = serviceEnv(map[string]string{"MIRRORQL_DATABASE_URL": d.url})
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", d.seedCmd, err, out)
		}
		d.seedOut = strings.TrimSpace(string(out))
		d.seedT = time.Since(t)
		log.Printf("%s: %s", d.name, d.seedOut)
	} else {
		// An older service without `mirrorql seed`: the package it runs.
		d.seedCmd = "seed.RunURL (the binary has no seed command)"
		d.stats, err = seed.RunURL(ctx, d.url, d.opts)
		if err != nil {
			return err
		}
		d.seedT = time.Since(t)
		d.seedOut = d.stats.String()
		log.Printf("%s: seeded %s", d.name, d.stats)
	}
	c, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return err
	}
	t = time.Now()
	_, err = c.Exec(ctx, "vacuum analyze")
	c.Close(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	d.vacT = time.Since(t)
	log.Printf("%s: vacuum analyze in %v", d.name, d.vacT.Round(time.Millisecond))
	if _, err := admin.Exec(ctx, "comment on database "+ident+" is "+quote(fingerprint)); err != nil {
		return err
	}
	return d.describe(ctx)
}

// hasSeedCommand reports whether the binary lists a seed command.
func hasSeedCommand(bin string) bool {
	out, _ := exec.Command(bin, "help").CombinedOutput()
	return strings.Contains(string(out), "\n  seed ")
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (d *dataset) describe(ctx context.Context) error {
	c, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	{
		err = c.QueryRow(ctx, `select (select count(*) from topic_message), (select count(*) from transaction),
			(select count(*) from schedule), (select count(*) from transaction_signature)`).
			Scan(&d.stats.TopicMessages, &d.stats.Transactions, &d.stats.Schedules, &d.stats.TransactionSignatures)
		if err != nil {
			return err
		}
	}
	// The activity route's window: the hot topic's first message to just
	// after its last, as the database holds them.
	err = c.QueryRow(ctx, `select coalesce(min(consensus_timestamp), 0), coalesce(max(consensus_timestamp) + 1, 0), count(*)
		from topic_message where topic_id = $1`, d.opts.TopicID(0)).Scan(&d.window.from, &d.window.to, &d.window.messages)
	if err != nil {
		return fmt.Errorf("the hot topic's history: %w", err)
	}
	return c.QueryRow(ctx, "select pg_size_pretty(pg_database_size(current_database()))").Scan(&d.size)
}

// serviceEnv is the environment without any MIRRORQL_* variable of ours
// (the service refuses unknown ones), plus vars.
func serviceEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MIRRORQL_") {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// ---------------------------------------------------------------------------
// The service process.

type service struct {
	cmd   *exec.Cmd
	pid   int
	host  string
	ready time.Duration
	done  <-chan error
	log   *os.File

	stopped bool
	exitErr error
}

// tail is the end of the service's log, for error messages.
func (s *service) tail() string {
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startService starts `mirrorql serve` and measures the time from exec to
// the first 200 of /health/readiness (polled every 2 ms).
func startService(ctx context.Context, f flags, url string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// The service logs a line per request at its default level: to a file,
	// as it would to a log collector, not to a pipe this process must drain.
	logf, err := os.CreateTemp("", "mirrorql-bench-service-*.log")
	if err != nil {
		return nil, err
	}
	s := &service{host: fmt.Sprintf("127.0.0.1:%d", port), log: logf}
	s.cmd = exec.Command(f.bin, "serve")
	env := map[string]string{
		"MIRRORQL_DATABASE_URL": url,
		"MIRRORQL_LISTEN":       s.host,
		"MIRRORQL_GRPC_LISTEN":  "",
		"MIRRORQL_DB_POOL_SIZE": strconv.Itoa(f.pool),
	}
	for _, kv := range f.serviceEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s.cmd.Env = serviceEnv(env)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	client := &http.Client{Timeout: time.Second}
	t := time.Now()
	// The parent-death signal comes when the thread that started the
	// service ends, and threads do end here: the one pgcluster keeps for a
	// server is retired when -soak-cold stops that server.
	if s.done, err = pgcluster.StartKept(s.cmd); err != nil {
		return nil, err
	}
	s.pid = s.cmd.Process.Pid
	deadline := t.Add(30 * time.Second)
	for {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("mirrorql serve exited: %v\n%s", err, s.tail())
		default:
		}
		resp, err := client.Get("http://" + s.host + "/health/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				s.ready = time.Since(t)
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("mirrorql serve not ready after 30s\n%s", s.tail())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (s *service) stop() error {
	if s.stopped {
		return s.exitErr
	}
	s.stopped = true
	defer func() {
		s.log.Close()
		os.Remove(s.log.Name())
	}()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case s.exitErr = <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		s.exitErr = <-s.done
	}
	return s.exitErr
}

// cpuTicks is utime+stime of the process, in clock ticks (USER_HZ, 100/s).
func (s *service) cpuTicks() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + st
}

const userHZ = 100

// hwm is the process's peak resident set (VmHWM), in bytes.
func (s *service) hwm() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// hasGraphQL reports whether /graphql answers a trivial query.
func (s *service) hasGraphQL(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.host+"/graphql",
		strings.NewReader(`{"query":"{ __typename }"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode == 200 && strings.Contains(buf.String(), "__typename")
}

// ---------------------------------------------------------------------------
// Routes and their random requests.

type route struct {
	name    string
	title   string // as shown in the tables
	example string
	reqs    [][]byte
	graphql bool
	scaling bool // also measured on the 10,000-message data set
	// scaleP50: its scaling target is on p50 and service CPU per request
	// rather than p99
	scaleP50 bool
	// firstConnsOnly: measured at the first connection count only
	firstConnsOnly bool
	// serviceEnv: measured on a service of its own with these settings
	// added (NAME=value), started for its phases
	serviceEnv []string
	check      func([]byte) bool
	// verify, if set, checks one response when the routes are checked
	verify func([]byte) error
}

// hotWindow is the hot topic's history in the database: its first
// message's consensus timestamp, its last one's plus 1 ns, and how many
// messages lie between.
type hotWindow struct{ from, to, messages int64 }

// activityBuckets is the activity route's bucket count (96: a day in
// quarter hours, as a dashboard would ask).
const activityBuckets = 96

const requestsPerRoute = 1 << 15

func entity(num int64) string { return "0.0." + strconv.FormatInt(num, 10) }

func timestamp(ns int64) string {
	return fmt.Sprintf("%d.%09d", ns/1_000_000_000, ns%1_000_000_000)
}

func noGraphQLErrors(b []byte) bool { return !bytes.Contains(b, []byte(`"errors"`)) }

const (
	// gqlMessageQuery asks for every field the REST by-sequence body has.
	gqlMessageQuery = `query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { ` + gqlMessageFields + ` } }`
	gqlPageQuery    = `query($t: EntityId!) { topicMessages(topicId: $t, first: 100) { nodes { sequenceNumber topic { id memo } } } }`
	// gqlMessageFields are the fields of a message REST's lists return.
	gqlMessageFields = `consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion payerAccountId ` +
		`chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }`
	// gqlListGt100Query is the list-gt-100 page with the fields REST
	// returns, and pageInfo for REST's links.next.
	gqlListGt100Query = `query($t: EntityId!, $gt: Long!) { topicMessages(topicId: $t, first: 100, sequenceNumber: {gt: $gt}) { ` +
		`nodes { ` + gqlMessageFields + ` } pageInfo { hasNextPage endCursor } } }`
	// gqlTopicFields are the topic's own fields of gqlTopicPageQuery: most of
	// REST's topic details.
	gqlTopicFields = `id memo deleted createdTimestamp timestamp { from to } adminKey { type key } submitKey { type key } ` +
		`autoRenewAccountId autoRenewPeriod`
	// gqlTopicPageQuery is the list-gt-100 page nested under its topic.
	gqlTopicPageQuery = `query($t: EntityId!, $gt: Long!) { topic(id: $t) { ` + gqlTopicFields + ` ` +
		`messages(sequenceNumber: {gt: $gt}, first: 100) { nodes { ` + gqlMessageFields + ` } pageInfo { hasNextPage endCursor } } } }`
	// gqlSchedulesQuery is the schedules-gt-100 page with the fields REST
	// returns (bench/handler's BenchmarkGraphQLSchedules).
	gqlSchedulesQuery = `query($gt: EntityId!) { schedules(first: 100, scheduleId: {gt: $gt}) { nodes { id adminKey { type key } ` +
		`consensusTimestamp creatorAccountId payerAccountId deleted executedTimestamp expirationTime memo ` +
		`transactionBody waitForExpiry signatures { consensusTimestamp publicKeyPrefix signature type } } } }`
	// gqlActivityQuery: message counts of a topic in equal buckets of a window.
	gqlActivityQuery = `query($t: EntityId!, $from: Timestamp!, $to: Timestamp!, $b: Int!) { topic(id: $t) { ` +
		`activity(from: $from, to: $to, buckets: $b) { messages } } }`
)

// activityTotal checks an activity answer: buckets counts that add up to want.
func activityTotal(want int64) func([]byte) error {
	return func(body []byte) error {
		var resp struct {
			Data struct {
				Topic *struct {
					Activity []struct {
						Messages int64 `json:"messages"`
					} `json:"activity"`
				} `json:"topic"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			return err
		}
		if resp.Data.Topic == nil || len(resp.Data.Topic.Activity) != activityBuckets {
			return fmt.Errorf("not %d buckets: %.200s", activityBuckets, body)
		}
		var n int64
		for _, b := range resp.Data.Topic.Activity {
			n += b.Messages
		}
		if n != want {
			return fmt.Errorf("the buckets count %d messages, the window holds %d", n, want)
		}
		return nil
	}
}

// fullPage checks a GraphQL page answer: the connection at path (under
// "data") holds want nodes and a next page.
func fullPage(want int, path ...string) func([]byte) error {
	return func(body []byte) error {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return err
		}
		v = lookup(v, append([]string{"data"}, path...)...)
		nodes, _ := lookup(v, "nodes").([]any)
		if len(nodes) != want {
			return fmt.Errorf("%d nodes at %s, not %d: %.200s", len(nodes), strings.Join(path, "."), want, body)
		}
		if next, _ := lookup(v, "pageInfo", "hasNextPage").(bool); !next {
			return fmt.Errorf("no next page at %s: %.200s", strings.Join(path, "."), body)
		}
		if cursor, _ := lookup(v, "pageInfo", "endCursor").(string); cursor == "" {
			return fmt.Errorf("no endCursor at %s: %.200s", strings.Join(path, "."), body)
		}
		return nil
	}
}

// lookup is v's member at path (nil when missing).
func lookup(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// buildRoutes are the routes on the data set of o served at host; w is the
// hot topic's history as the database holds it (the activity route's
// window; zero: as the seed's layout places it).
func buildRoutes(o seed.Options, host string, w hotWindow) []route {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 5))
	hot := o.TopicMessages(0)
	hotID := entity(seed.FirstTopicNum)
	total := o.TotalMessages()
	gen, get, gql := requestMakers(host)
	randomTopic := func() int64 { return seed.FirstTopicNum + rng.Int64N(int64(o.Topics)) }
	// A uniformly random existing message: topic i and sequence number.
	randomMessage := func() (int, int64) {
		k := rng.Int64N(total)
		if k < hot {
			return 0, k + 1
		}
		k -= hot
		per := int64(o.MessagesPerTopic)
		return 1 + int(k/per), k%per + 1
	}
	firstSchedule := o.FirstScheduleNum()
	if w == (hotWindow{}) {
		w = hotWindow{from: o.MessageTimestamp(0, 1), to: o.MessageTimestamp(0, hot) + 1, messages: hot}
	}
	activityVars := map[string]any{"t": hotID, "from": timestamp(w.from), "to": timestamp(w.to), "b": activityBuckets}
	activity := gql(gqlActivityQuery, activityVars)
	routes := []route{
		{name: "by-sequence", title: "REST by sequence", scaling: true,
			example: "/api/v1/topics/" + hotID + "/messages/{1…" + strconv.FormatInt(hot, 10) + "}",
			reqs:    gen(func() []byte { return get("/api/v1/topics/%s/messages/%d", hotID, 1+rng.Int64N(hot)) })},
		{name: "by-timestamp", title: "REST by timestamp",
			example: "/api/v1/topics/messages/{timestamp of a random message}",
			reqs: gen(func() []byte {
				i, seq := randomMessage()
				return get("/api/v1/topics/messages/%s", timestamp(o.MessageTimestamp(i, seq)))
			})},
		{name: "list-25", title: "REST list limit=25", scaling: true,
			example: "/api/v1/topics/{random topic}/messages?limit=25",
			reqs:    gen(func() []byte { return get("/api/v1/topics/%s/messages?limit=25", entity(randomTopic())) })},
		{name: "list-gt-100", title: "REST list seq gt, limit=100", scaling: true,
			example: "/api/v1/topics/" + hotID + "/messages?sequencenumber=gt:{random}&limit=100",
			reqs: gen(func() []byte {
				return get("/api/v1/topics/%s/messages?sequencenumber=gt:%d&limit=100", hotID, rng.Int64N(hot-100))
			})},
		{name: "topic", title: "REST topic details",
			example: "/api/v1/topics/{random topic}",
			reqs:    gen(func() []byte { return get("/api/v1/topics/%s", entity(randomTopic())) })},
		{name: "schedules", title: "REST schedules list",
			example: "/api/v1/schedules?schedule.id=gte:{random schedule}&limit=25",
			reqs: gen(func() []byte {
				return get("/api/v1/schedules?schedule.id=gte:%s&limit=25", entity(firstSchedule+rng.Int64N(int64(max(o.Schedules-25, 1)))))
			})},
		// The same requests to a service without the response cache: every
		// request is answered by the database (its two statements).
		{name: "schedules-uncached", title: "REST schedules list, uncached", firstConnsOnly: true,
			serviceEnv: []string{"MIRRORQL_CACHE_ENABLED=false"},
			example:    "/api/v1/schedules?schedule.id=gte:{random schedule}&limit=25 to a service with `MIRRORQL_CACHE_ENABLED=false`"},
		{name: "schedule", title: "REST schedule by id",
			example: "/api/v1/schedules/{random schedule}",
			reqs: gen(func() []byte {
				return get("/api/v1/schedules/%s", entity(firstSchedule+rng.Int64N(int64(o.Schedules))))
			})},
		{name: "gql-message", title: "GraphQL topicMessage", graphql: true, check: noGraphQLErrors,
			example: gqlMessageQuery + ` with $t = "` + hotID + `", $s random`,
			reqs: gen(func() []byte {
				return gql(gqlMessageQuery, map[string]any{"t": hotID, "s": 1 + rng.Int64N(hot)})
			})},
		{name: "gql-page", title: "GraphQL 100 messages + topic", graphql: true, check: noGraphQLErrors,
			example: gqlPageQuery + ` with $t a random topic`,
			reqs: gen(func() []byte {
				return gql(gqlPageQuery, map[string]any{"t": entity(randomTopic())})
			})},
		{name: "gql-list-gt-100", title: "GraphQL list seq gt, first 100", graphql: true, check: noGraphQLErrors,
			verify:  fullPage(100, "topicMessages"),
			example: gqlListGt100Query + ` with $t = "` + hotID + `", $gt random`,
			reqs: gen(func() []byte {
				return gql(gqlListGt100Query, map[string]any{"t": hotID, "gt": rng.Int64N(hot - 100)})
			})},
		// The same page nested under its topic, with the topic's fields:
		// set beside list-gt-100 (pairs.go).
		{name: "gql-topic-page", title: "GraphQL topic + list seq gt, first 100", graphql: true, check: noGraphQLErrors,
			verify:  fullPage(100, "topic", "messages"),
			example: gqlTopicPageQuery + ` with $t = "` + hotID + `", $gt random`,
			reqs: gen(func() []byte {
				return gql(gqlTopicPageQuery, map[string]any{"t": hotID, "gt": rng.Int64N(hot - 100)})
			})},
		// A page of 100 schedules through REST, without the response cache
		// (as GraphQL's are answered: every request reads the database),
		// and the same page through GraphQL (bench/handler's
		// BenchmarkSchedulesGt100 and BenchmarkGraphQLSchedules).
		{name: "schedules-gt-100", title: "REST schedules list gt, limit=100, uncached", firstConnsOnly: true,
			serviceEnv: []string{"MIRRORQL_CACHE_ENABLED=false"},
			example:    "/api/v1/schedules?schedule.id=gt:{random schedule}&limit=100 to a service with `MIRRORQL_CACHE_ENABLED=false`",
			reqs: gen(func() []byte {
				return get("/api/v1/schedules?schedule.id=gt:%s&limit=100", entity(firstSchedule+rng.Int64N(int64(max(o.Schedules-100, 1)))))
			})},
		// (on the same service as schedules-gt-100: the response cache is
		// REST's alone, and so the pair shares a process)
		{name: "gql-schedules", title: "GraphQL schedules gt, first 100", graphql: true, check: noGraphQLErrors, firstConnsOnly: true,
			serviceEnv: []string{"MIRRORQL_CACHE_ENABLED=false"},
			example:    gqlSchedulesQuery + ` with $gt a random schedule`,
			reqs: gen(func() []byte {
				return gql(gqlSchedulesQuery, map[string]any{"gt": entity(firstSchedule + rng.Int64N(int64(max(o.Schedules-100, 1))))})
			})},
		// One request, the same every time: the hot topic's whole history
		// in 96 buckets.
		{name: "gql-activity", title: "GraphQL topic activity, 96 buckets", graphql: true, check: noGraphQLErrors,
			scaling: true, scaleP50: true, firstConnsOnly: true, verify: activityTotal(w.messages),
			example: fmt.Sprintf("%s with $t = %q, $from = %q (its first message), $to = %q (its last + 1 ns), $b = %d",
				gqlActivityQuery, hotID, timestamp(w.from), timestamp(w.to), activityBuckets),
			reqs: gen(func() []byte { return activity })},
	}
	// The uncached list sends the cached one's requests.
	i := slices.IndexFunc(routes, func(r route) bool { return r.name == "schedules" })
	routes[i+1].reqs = routes[i].reqs
	return routes
}

// checkRoutes sends the first request of every route once and insists on a 200.
func checkRoutes(ctx context.Context, s *service, routes []route, graphql bool) error {
	for _, r := range routes {
		if r.graphql && !graphql {
			continue
		}
		res, err := loadgen.Run(ctx, loadgen.Config{Addr: s.host, Conns: 1, Duration: 300 * time.Millisecond,
			Requests: r.reqs[:64], Check: r.check})
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if res.Errors > 0 {
			return fmt.Errorf("%s: %d of %d requests failed: %s", r.name, res.Errors, res.Requests, res.FirstErr)
		}
		if r.verify != nil {
			body, err := exchange(ctx, s.host, r.reqs[0])
			if err == nil {
				err = r.verify(body)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
	}
	return nil
}

// exchange sends one prebuilt request to addr and returns the body of its
// 200 answer.
func exchange(ctx context.Context, addr string, req []byte) ([]byte, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	return body, err
}

// measurement is one route at one connection count.
type measurement struct {
	route    route
	conns    int
	rps      float64
	p50, p99 time.Duration
	requests int64
	errors   int64
	firstErr string
	cpuPer1k float64 // service CPU seconds per 1,000 requests
	// the load generator's (this process's) CPU seconds per 1,000 requests
	loadCPUPer1k float64
	// the CPU seconds per 1,000 requests of the PostgreSQL backends of the service's pool
	pgCPUPer1k float64
	rounds     int   // > 1: medians of that many runs
	hwm        int64 // service VmHWM after the phase
	avgBytes   float64
}

// median is the measurement with the median p99, with the medians of the
// rate and of the CPU figures.
func median(ms []measurement) measurement {
	var rps, cpu, pg, p50 []float64
	for _, m := range ms {
		rps, cpu, pg, p50 = append(rps, m.rps), append(cpu, m.cpuPer1k), append(pg, m.pgCPUPer1k), append(p50, float64(m.p50))
	}
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b measurement) int { return cmp.Compare(a.p99, b.p99) })
	out := sorted[len(sorted)/2]
	out.rps, out.cpuPer1k, out.pgCPUPer1k, out.p50 = medianOf(rps), medianOf(cpu), medianOf(pg), time.Duration(medianOf(p50))
	out.rounds = len(ms)
	return out
}

func measure(ctx context.Context, s *service, r route, conns int, f flags, mon *pgMonitor) (measurement, error) {
	var t0, t1, l0, l1 int64
	var pids []int
	var pg0, pg1 map[int]int64
	self := &service{pid: os.Getpid()}
	res, err := loadgen.Run(ctx, loadgen.Config{
		Addr: s.host, Conns: conns, Warmup: f.warmup, Duration: f.duration, Requests: r.reqs, Check: r.check,
		Seed: uint64(conns),
		OnWindow: func(open bool) {
			if open {
				pids = mon.pids(ctx, false)
				t0, l0, pg0 = s.cpuTicks(), self.cpuTicks(), mon.ticks(pids)
			} else {
				t1, l1, pg1 = s.cpuTicks(), self.cpuTicks(), mon.ticks(pids)
			}
		},
	})
	if err != nil {
		return measurement{}, err
	}
	m := measurement{route: r, conns: conns, rps: res.RPS(), p50: res.Quantile(50), p99: res.Quantile(99),
		requests: res.Requests, errors: res.Errors, firstErr: res.FirstErr, hwm: s.hwm(),
		avgBytes: float64(res.BodyBytes) / float64(max(res.Requests, 1))}
	if t0 >= 0 && t1 >= 0 {
		m.cpuPer1k = float64(t1-t0) / userHZ / float64(res.Requests) * 1000
		m.loadCPUPer1k = float64(l1-l0) / userHZ / float64(res.Requests) * 1000
	}
	if len(pids) > 0 {
		m.pgCPUPer1k = spent(pg0, pg1) / float64(res.Requests) * 1000
	}
	log.Printf("%-13s c=%-3d %8.0f req/s  p50 %-9v p99 %-9v errors %d  cpu s/1k: service %.3f, postgres %.3f, load tool %.3f  rss %.1f MiB",
		r.name, conns, m.rps, m.p50, m.p99, m.errors, m.cpuPer1k, m.pgCPUPer1k, m.loadCPUPer1k, float64(m.hwm)/(1<<20))
	if m.firstErr != "" {
		log.Printf("  first error: %s", m.firstErr)
	}
	return m, nil
}

// requestMakers are the helpers that draw a route's requests: gen calls f
// requestsPerRoute times, get is a GET of a formatted path, gql a GraphQL
// POST. GraphQL requests use variables, as clients do: the query text is the
// same for every request, so the service's parsed-query cache applies.
func requestMakers(host string) (gen func(func() []byte) [][]byte, get func(string, ...any) []byte, gql func(string, map[string]any) []byte) {
	gen = func(f func() []byte) [][]byte {
		out := make([][]byte, requestsPerRoute)
		for i := range out {
			out[i] = f()
		}
		return out
	}
	get = func(format string, args ...any) []byte { return loadgen.Get(host, fmt.Sprintf(format, args...)) }
	gql = func(query string, vars map[string]any) []byte {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return loadgen.PostJSON(host, "/graphql", body)
	}
	return gen, get, gql
}
