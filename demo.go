package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/db/pgcluster"
	"mirrorql/graph"
	"mirrorql/model"
	"mirrorql/seed"
	"mirrorql/service"
)

// demo serves the demo data set. With MIRRORQL_DATABASE_URL unset it runs on
// a throwaway PostgreSQL cluster of its own, which it stops and removes when
// ctx ends (Ctrl-C, SIGTERM); otherwise on that database, migrated, and
// seeded when it holds no topic message. What it says goes to out.
func demo(ctx context.Context, cfg config.Config, log *slog.Logger, out io.Writer) (err error) {
	start := time.Now()
	// Bind first: a busy port should fail the demo before any work. Until
	// the server runs, connections wait in the listen queue.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	if os.Getenv(config.Prefix+"DATABASE_URL") == "" {
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
	if err := db.Migrate(ctx, d.Bun()); err != nil {
		return err
	}
	var seeded bool
	if err := d.Bun().NewRaw("select exists (select 1 from topic_message)").Scan(ctx, &seeded); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if seeded {
		fmt.Fprintln(out, "mirrorql demo: the database already holds topic messages: not seeding it")
	} else {
		o := seed.DefaultOptions()
		o.Shard, o.Realm = cfg.Shard, cfg.Realm
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

	base := "http://" + browsable(ln.Addr(), cfg.Listen)
	fmt.Fprintf(out, "\nmirrorql demo is up in %.1fs. Press Ctrl-C to stop.\n\n", time.Since(start).Seconds())
	fmt.Fprintf(out, "  REST\n")
	for _, p := range ex.paths() {
		fmt.Fprintf(out, "    %s%s\n", base, p)
	}
	fmt.Fprintf(out, "  GraphQL      %s%s  (open it in a browser for the explorer)\n", base, graph.Endpoint)
	fmt.Fprintf(out, "  API docs     %s/api/v1/docs\n", base)
	fmt.Fprintf(out, "  metrics      %s%s\n", base, service.RouteMetrics)
	fmt.Fprintf(out, "  readiness    %s%s\n\n", base, service.RouteReadiness)
	err = runServer(ctx, cfg, d, log, ln)
	fmt.Fprintln(out, "mirrorql demo: stopping")
	return err
}

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
