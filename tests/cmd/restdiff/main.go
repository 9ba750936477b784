// Command restdiff sends the same request targets to the mirror node's own
// REST API (the Node module) and to mirrorql, both serving one database
// loaded with tests/testdata/restdiff/data.sql, compares every pair and
// records the mirror node's answers as the cases tests/restdiff_test.go
// replays (tests/testdata/restdiff/README.md says how to run it).
//
// It never builds nor starts the Node server: it takes the address of one
// already running (docs/rest.md, "Conformance"). Given -db (the database
// that server reads), it loads the data set there and starts mirrorql on it
// itself; given -ours instead, it compares with a mirrorql already running.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/db"
	"mirrorql/tests/restdiff"
	"mirrorql/tools/fixture"
)

// makeV2 gives dbURL the importer's v2 tables (fixture.CreateV2, monthly
// partitions) unless it has a topic_message table already.
func makeV2(ctx context.Context, dbURL string) error {
	d, err := db.Open(db.Options{URL: dbURL, ConnectTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer d.Close()
	var exists bool
	if err := d.Bun().QueryRowContext(ctx, "SELECT to_regclass('topic_message') IS NOT NULL").Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	return fixture.CreateV2(ctx, d.Bun(), fixture.DefaultV2Options())
}

func main() { os.Exit(run()) }

func run() int {
	node := flag.String("node", "", "base URL of the running Node REST server (required)")
	ours := flag.String("ours", "", "base URL of a mirrorql serving the same database (or -db)")
	dbURL := flag.String("db", "", "the database the Node server reads: migrated, loaded with the data set, and served by -bin")
	bin := flag.String("bin", "bin/mirrorql", "the mirrorql binary started on -db")
	data := flag.String("data", "tests/testdata/restdiff/data.sql", "the data set loaded into -db")
	layout := flag.String("layout", "v1", "the layout -db is given: v1 (bin migrates it) or v2 (made with the importer's v2 tables when it has none)")
	seed := flag.Uint64("seed", 38, "generator seed: the same seed and -n give the same requests")
	n := flag.Int("n", 3000, "number of generated requests (links.next followed on top)")
	follow := flag.Int("follow", 3, "links.next followed this many pages deep from each page")
	out := flag.String("out", "", "write the cases here (JSON lines); without it only the differences are printed")
	flag.Parse()
	if *node == "" || (*ours == "") == (*dbURL == "") {
		fmt.Fprintln(os.Stderr, "restdiff: -node, and one of -ours or -db, are required")
		flag.Usage()
		return 2
	}
	if *dbURL != "" {
		base, stop, err := serveOurs(*dbURL, *bin, *data, *layout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "restdiff:", err)
			return 1
		}
		defer stop()
		*ours = base
	}
	cases, err := record(restdiff.HostPort(*node), restdiff.HostPort(*ours), *seed, *n, *follow)
	if err != nil {
		fmt.Fprintln(os.Stderr, "restdiff:", err)
		return 1
	}
	unexplained := map[string]int{}
	decided := map[string]int{}
	for i := range cases {
		c := &cases[i]
		if c.Decision != "" {
			decided[c.Decision]++
			continue
		}
		if d := restdiff.Diff(c.Node, *c.Ours); d != "" {
			unexplained[c.Via]++
			fmt.Printf("#%d %.200q (%s): %.600s\n", i, c.Target, c.Via, d)
		}
		c.Ours = nil
	}
	fmt.Printf("%d cases; by decision: %v; unexplained by class: %v\n", len(cases), sorted(decided), sorted(unexplained))
	if *out != "" {
		if err := restdiff.WriteCases(*out, cases); err != nil {
			fmt.Fprintln(os.Stderr, "restdiff:", err)
			return 1
		}
	}
	if len(unexplained) > 0 {
		fmt.Fprintln(os.Stderr, "restdiff: differences no decision explains (fix them, or add a row to docs/reference/DECISIONS.md and to restdiff.Decide)")
		return 3
	}
	return 0
}

// serveOurs migrates dbURL with bin (or on the v2 layout, makes the
// importer's v2 tables when it has none), loads the data set (the tables it
// fills emptied first, triggers off as for a dump, and the address book row
// the Node server's readiness asks for), and starts bin serving it.
func serveOurs(dbURL, bin, dataPath, layout string) (base string, stop func(), err error) {
	ctx := context.Background()
	env := append(os.Environ(), "MIRRORQL_DATABASE_URL="+dbURL)
	switch layout {
	case "v1":
		migrate := exec.Command(bin, "migrate")
		migrate.Env = env
		if out, err := migrate.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("%s migrate: %v: %s", bin, err, out)
		}
	case "v2":
		if err := makeV2(ctx, dbURL); err != nil {
			return "", nil, err
		}
	default:
		return "", nil, fmt.Errorf("-layout %q: v1 or v2", layout)
	}
	data, err := os.ReadFile(dataPath)
	if err != nil {
		return "", nil, err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	load := "BEGIN; SET LOCAL session_replication_role = replica;" +
		" TRUNCATE entity, schedule, transaction_signature, topic_message, topic_message_lookup, transaction, topic, custom_fee;" +
		string(data) +
		"; CREATE TABLE IF NOT EXISTS address_book (start_consensus_timestamp bigint PRIMARY KEY, end_consensus_timestamp bigint," +
		" file_id bigint NOT NULL DEFAULT 102, node_count int, file_data bytea NOT NULL DEFAULT '');" +
		" INSERT INTO address_book (start_consensus_timestamp) VALUES (1) ON CONFLICT DO NOTHING; COMMIT;"
	if _, err := conn.Exec(ctx, load, pgx.QueryExecModeSimpleProtocol); err != nil {
		return "", nil, fmt.Errorf("loading %s: %w", dataPath, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(env, "MIRRORQL_LISTEN="+addr, "MIRRORQL_GRPC_LISTEN=", "MIRRORQL_CACHE_ENABLED=false", "MIRRORQL_DB_POOL_SIZE=3")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	base = "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/health/readiness"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
	}
	stop()
	return "", nil, fmt.Errorf("%s serve did not become ready on %s", bin, addr)
}

func sorted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// record sends each generated request to both servers, follows the mirror
// node's links.next, and classifies each difference (restdiff.Decide).
func record(node, ours string, seed uint64, n, follow int) ([]restdiff.Case, error) {
	const timeout = 20 * time.Second
	queue := restdiff.Generate(seed, n)
	depth := make([]int, len(queue))
	seen := map[string]bool{}
	var cases []restdiff.Case
	for i := 0; i < len(queue); i++ {
		r := queue[i]
		key := r.Target + "\x00" + fmt.Sprint(r.Header)
		if seen[key] {
			continue
		}
		seen[key] = true
		na, err := restdiff.Send(node, r, timeout)
		if err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		oa, err := restdiff.Send(ours, r, timeout)
		if err != nil {
			return nil, fmt.Errorf("mirrorql: %w", err)
		}
		c := restdiff.Case{Request: r, Node: na, Ours: &oa}
		if restdiff.Diff(na, oa) != "" {
			c.Decision = restdiff.Decide(&c)
		}
		cases = append(cases, c)
		if next := restdiff.NextLink(na); next != "" && depth[i] < follow {
			queue = append(queue, restdiff.Request{Target: next, Via: "links.next"})
			depth = append(depth, depth[i]+1)
		}
	}
	return cases, nil
}
