package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/config"
	"mirrorql/dashboard"
	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/model"
	"mirrorql/redact"
	"mirrorql/service"
	"mirrorql/tools/fixture"
	"mirrorql/tools/pgcluster"
	"mirrorql/tools/seed"
)

// demo serves the demo data set. With MIRRORQL_DATABASE_URL unset it runs on
// a throwaway PostgreSQL cluster of its own, which it stops and removes when
// ctx ends (Ctrl-C, SIGTERM); otherwise on that database, migrated, and
// seeded when it holds no topic message. args are its flags (demoFlags);
// own says which of its addresses are its defaults, which move to a free
// port when taken (bindOwn). What it says goes to out.
func demo(ctx context.Context, cfg config.Config, own ownAddrs, args []string, log *slog.Logger, out io.Writer) (err error) {
	start := time.Now()
	layout, help, err := demoFlags(args, out)
	if err != nil || help {
		return err
	}
	// Bind first: a port the user chose that is taken should fail the demo
	// before any work. Until the server runs, connections wait in the
	// listen queue.
	ln, gln, err := bindOwn(cfg, own, out, "demo")
	if err != nil {
		return err
	}
	defer ln.Close()
	defer closeListener(gln)
	ownCluster := os.Getenv(config.Prefix+"DATABASE_URL") == ""
	if ownCluster {
		fmt.Fprintln(out, "mirrorql demo: starting a throwaway PostgreSQL cluster (MIRRORQL_DATABASE_URL is unset)")
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{})
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		pid, dir := cluster.PID(), cluster.Dir()
		defer func() {
			if serr := cluster.Stop(); serr != nil {
				err = errors.Join(err, serr)
				fmt.Fprintf(out, "mirrorql demo: could not stop PostgreSQL (pid %d): %v\n", pid, serr)
				return
			}
			fmt.Fprintf(out, "mirrorql demo: stopped PostgreSQL (pid %d) and removed %s\n", pid, dir)
		}()
		// Tests read this line: keep its shape.
		fmt.Fprintf(out, "mirrorql demo: PostgreSQL pid %d, directory %s, database %s\n", pid, dir, cluster.URL())
		cfg.DatabaseURL = cluster.URL()
	} else {
		fmt.Fprintln(out, "mirrorql demo: using the database of MIRRORQL_DATABASE_URL")
	}

	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Health().Log = log
	if err := demoSchema(ctx, d, layout, out); err != nil {
		return err
	}
	var seeded bool
	if err := d.Bun().NewRaw("select exists (select 1 from topic_message)").Scan(ctx, &seeded); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	o := seed.DefaultOptions()
	o.Shard, o.Realm = cfg.Shard, cfg.Realm
	if seeded {
		fmt.Fprintln(out, "mirrorql demo: the database already holds topic messages: not seeding it")
	} else {
		st, err := seed.RunURL(ctx, cfg.DatabaseURL, o)
		if err != nil {
			return fmt.Errorf("demo: %w (a database with some of the data already: `mirrorql seed --reset`)", err)
		}
		fmt.Fprintf(out, "mirrorql demo: seeded %d topics, %d messages, %d schedules in %s\n",
			st.Topics, st.TopicMessages, st.Schedules, st.Elapsed.Round(time.Millisecond))
	}
	ex, err := demoExamples(ctx, d)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// Only the demo's own cluster gets a live topic: someone else's database
	// stays as it was seeded.
	var live *seed.LiveTopic
	stopLive := func() {}
	if ownCluster {
		if live, err = seed.NewLiveTopic(o, demoLiveTopic); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		stopLive = keepTopicAlive(ctx, cfg.DatabaseURL, live, log)
		// Deferred after the cluster's Stop, so it runs before it.
		defer stopLive()
	}

	fmt.Fprintf(out, "\nmirrorql demo is up in %.1fs. Press Ctrl-C to stop.\n\n", time.Since(start).Seconds())
	base, grpcAddr := printLinks(out, cfg, ln, gln, ex)
	if live != nil {
		key := "no submit key"
		if live.HasSubmitKey() {
			key = "has a submit key"
		}
		printLiveTopic(out, base, grpcAddr, model.EntityID(live.ID()),
			fmt.Sprintf("(%s) gets a message every second: text, JSON, every %dth in chunks", key, seed.LiveChunkEvery))
	}
	err = runServer(ctx, cfg, d, log, ln, gln)
	fmt.Fprintln(out, "mirrorql demo: stopping")
	stopLive()
	return err
}

// The demo's layouts (-layout): the mirror node's two database layouts
// (docs/layouts.md, docs/reference/v2-layout.md).
const (
	demoLayoutV1 = "v1" // plain tables: db.Migrate, as `mirrorql migrate` creates them
	demoLayoutV2 = "v2" // topic_message and transaction partitioned by month: fixture.CreateV2
)

// demoFlags parses the demo's flags: -layout v1 (the default) or v2. help
// is set when -h asked for the usage, which it has then printed to out.
func demoFlags(args []string, out io.Writer) (layout string, help bool, err error) {
	fs := flag.NewFlagSet("mirrorql demo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&layout, "layout", demoLayoutV1, "database layout of the demo's data: v1 (plain tables) or v2 (the public mainnet mirror nodes': partitioned by month)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: mirrorql demo [flags]\n\n"+
			"Serves the demo data set on a throwaway PostgreSQL cluster (or MIRRORQL_DATABASE_URL's database).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", true, nil
		}
		return "", false, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(out, "mirrorql demo: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return "", false, errUsage
	}
	if layout != demoLayoutV1 && layout != demoLayoutV2 {
		fmt.Fprintf(out, "mirrorql demo: -layout must be v1 or v2, got %q\n", layout)
		return "", false, errUsage
	}
	return layout, false, nil
}

// demoSchema prepares the demo's database: db.Migrate for v1; for v2,
// fixture.CreateV2 when the database has no topic_message yet (CreateV2 needs
// an empty one), Migrate when its topic_message is already partitioned (a
// demo run before), and an error when it holds a v1 topic_message, which
// the demo will not convert.
func demoSchema(ctx context.Context, d *db.DB, layout string, out io.Writer) error {
	if layout == demoLayoutV1 {
		return db.Migrate(ctx, d.Bun())
	}
	var kind string // topic_message's relkind: "" when absent, "p" when partitioned
	if err := d.Bun().QueryRowContext(ctx,
		"select coalesce((select relkind::text from pg_class where oid = to_regclass('topic_message')), '')").Scan(&kind); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	switch kind {
	case "":
		fmt.Fprintln(out, "mirrorql demo: building the v2 layout (topic_message and transaction partitioned by month)")
		return fixture.CreateV2(ctx, d.Bun(), fixture.DefaultV2Options())
	case "p":
		return db.Migrate(ctx, d.Bun())
	default:
		return errors.New("demo: -layout v2 needs a database without topic_message, and this one has a v1 (not partitioned) topic_message")
	}
}

// demoListenDefault is where the demo listens unless MIRRORQL_LISTEN says
// otherwise: this machine only, since the demo is for the person at it.
const demoListenDefault = "127.0.0.1:8080"

// demoListen is the demo's listen address: listen when MIRRORQL_LISTEN is
// set, else demoListenDefault (serve's default, every interface, is not
// the demo's).
func demoListen(listen string, set bool) string {
	if set {
		return listen
	}
	return demoListenDefault
}

// demoGRPCListenDefault is the demo's gRPC listener unless
// MIRRORQL_GRPC_LISTEN says otherwise: this machine only, as its main one.
const demoGRPCListenDefault = "127.0.0.1:5600"

// demoGRPCListen is the demo's gRPC address: grpcListen when
// MIRRORQL_GRPC_LISTEN is set (empty: none), else demoGRPCListenDefault.
func demoGRPCListen(grpcListen string, set bool) string {
	if set {
		return grpcListen
	}
	return demoGRPCListenDefault
}

// demoLiveTopic is the seeded topic the demo keeps growing on its own
// cluster: 0.0.2001, the topic of the docs' examples.
const demoLiveTopic = 0

// keepTopicAlive appends a message to live every second until ctx ends or
// the returned stop is called; stop returns once the writer has stopped, and
// may be called again. A failing write is logged once, when the failures
// start, and tried again every second: the demo serves on regardless.
func keepTopicAlive(ctx context.Context, dbURL string, live *seed.LiveTopic, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				_ = conn.Close(context.WithoutCancel(ctx))
			}
		}()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		failing := false
		for {
			err := func() error {
				// A write stuck on a dead server must not outlast the next tick by much.
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if conn == nil {
					c, err := pgx.Connect(ctx, dbURL)
					if err != nil {
						return err
					}
					conn = c
				}
				_, err := live.Append(ctx, conn)
				return err
			}()
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				// The connection may be what failed: start afresh next time.
				if conn != nil {
					_ = conn.Close(ctx)
					conn = nil
				}
				if !failing {
					log.Warn("demo: cannot append to the live topic; trying again every second",
						"topic", model.EntityID(live.ID()).String(), "err", redact.Secret(err.Error(), dbURL))
					failing = true
				}
			case failing:
				log.Info("demo: appending to the live topic again", "topic", model.EntityID(live.ID()).String())
				failing = false
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// printLinks prints the banner's links, for the listeners ln and gln (nil:
// none) and the ids of ex, and returns the base URL and the gRPC address
// ("" when none) for the lines of a live topic.
func printLinks(out io.Writer, cfg config.Config, ln, gln net.Listener, ex examples) (base, grpcAddr string) {
	base = "http://" + browsable(ln.Addr(), cfg.Listen)
	if cfg.DashboardEnabled {
		fmt.Fprintf(out, "  dashboard    %s%s\n", base, dashboard.Route)
	}
	fmt.Fprintf(out, "  REST\n")
	for _, p := range ex.paths() {
		fmt.Fprintf(out, "    %s%s\n", base, p)
	}
	fmt.Fprintf(out, "  GraphQL      %s%s  (open it in a browser for the explorer)\n", base, graph.Endpoint)
	fmt.Fprintf(out, "  API docs     %s/api/v1/docs\n", base)
	fmt.Fprintf(out, "  metrics      %s%s\n", base, service.RouteMetrics)
	fmt.Fprintf(out, "  readiness    %s%s\n", base, service.RouteReadiness)
	if gln != nil {
		grpcAddr = browsable(gln.Addr(), cfg.GRPCListen)
		fmt.Fprintf(out, "  gRPC         %s  (the SDKs' ConsensusService; also on %s)\n", grpcAddr, browsable(ln.Addr(), cfg.Listen))
	}
	fmt.Fprintln(out)
	return base, grpcAddr
}

// printLiveTopic says how to follow topic id, which about describes: in the
// explorer, with curl over server-sent events, and with grpcurl when there
// is a gRPC listener at grpcAddr.
func printLiveTopic(out io.Writer, base, grpcAddr string, id model.EntityID, about string) {
	query := `subscription { topicMessages(topicId: "` + id.String() + `") { sequenceNumber consensusTimestamp message(encoding: UTF8) } }`
	body, _ := json.Marshal(struct {
		Query string `json:"query"`
	}{query})
	fmt.Fprintf(out, "  live topic   %s %s\n", id, about)
	fmt.Fprintf(out, "    explorer   %s%s?query=%s\n", base, graph.Endpoint, url.QueryEscape(query))
	fmt.Fprintf(out, "    curl -N -H %s -H %s --data %s %s\n",
		shellQuote("Content-Type: application/json"), shellQuote("Accept: text/event-stream"),
		shellQuote(string(body)), shellQuote(base+graph.Endpoint))
	if grpcAddr != "" {
		fmt.Fprintf(out, "    grpcurl -plaintext -d %s %s com.hedera.mirror.api.proto.ConsensusService/subscribeTopic\n",
			shellQuote(fmt.Sprintf(`{"topicID": {"shardNum": %d, "realmNum": %d, "topicNum": %d}}`, id.Shard(), id.Realm(), id.Num())), grpcAddr)
	}
	fmt.Fprintln(out)
}

// shellQuote makes s one word for a POSIX shell, left bare when nothing in
// it is special: single quotes keep everything but a single quote, which is
// closed, escaped and reopened.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe are the characters no POSIX shell treats specially.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"

// examples are real ids of the data set, for the printed links.
type examples struct {
	topic     model.EntityID
	sequence  int64
	timestamp model.Timestamp
	schedule  model.EntityID
	haveTopic bool
	haveSched bool
}

func demoExamples(ctx context.Context, d *db.DB) (examples, error) {
	var ex examples
	var topic, seq, ts int64
	err := d.Bun().QueryRowContext(ctx,
		"select topic_id, sequence_number, consensus_timestamp from topic_message order by consensus_timestamp limit 1").
		Scan(&topic, &seq, &ts)
	switch {
	case err == nil:
		ex.topic, ex.sequence, ex.timestamp, ex.haveTopic = model.EntityID(topic), seq, model.Timestamp(ts), true
	case !errors.Is(err, sql.ErrNoRows):
		return ex, err
	}
	var sched int64
	err = d.Bun().QueryRowContext(ctx, "select schedule_id from schedule order by schedule_id limit 1").Scan(&sched)
	switch {
	case err == nil:
		ex.schedule, ex.haveSched = model.EntityID(sched), true
	case !errors.Is(err, sql.ErrNoRows):
		return ex, err
	}
	return ex, nil
}

func (ex examples) paths() []string {
	var p []string
	if ex.haveTopic {
		t := ex.topic.String()
		p = append(p,
			"/api/v1/topics/"+t,
			"/api/v1/topics/"+t+"/messages?limit=5",
			fmt.Sprintf("/api/v1/topics/%s/messages/%d", t, ex.sequence),
			"/api/v1/topics/messages/"+ex.timestamp.String(),
		)
	}
	p = append(p, "/api/v1/schedules?limit=5")
	if ex.haveSched {
		p = append(p, "/api/v1/schedules/"+ex.schedule.String())
	}
	return p
}

// browsable is the host:port to print for a listener: "localhost" in place
// of an unspecified address.
func browsable(addr net.Addr, listen string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
