package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/tests/testdb"
)

// TestReadOnlyReplica runs mirrorql against a database every session of which
// is read-only, as on a hot-standby replica: the database has
// default_transaction_read_only = on, and one of the two instances logs in
// as the read-only role docs/operating.md recommends (LOGIN, SELECT on the tables,
// nothing else, default_transaction_read_only = on). Any write `serve` made
// would fail ("cannot execute ... in a read-only transaction" or "permission
// denied") and show as a 503; instead every REST case answers exactly as on a
// writable database, and the GraphQL face answers without errors.
func TestReadOnlyReplica(t *testing.T) {
	t.Parallel()
	dbURL, b := testdb.New(t)
	seedREST(t, b)
	ctx := context.Background()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()

	// The recommended read-only role (README "Operating"): the same
	// statements, with a unique name since roles are cluster-wide.
	var r [4]byte
	_, _ = rand.Read(r[:])
	role, password := "mirrorql_reader_"+hex.EncodeToString(r[:]), hex.EncodeToString(r[:])+"-pw"
	roleID := pgx.Identifier{role}.Sanitize()
	if _, err := b.ExecContext(ctx, "CREATE ROLE "+roleID+" LOGIN PASSWORD '"+password+"'"); err != nil {
		// A test server whose admin role may not create roles: the database
		// setting alone is still checked.
		t.Logf("CREATE ROLE: %v: the read-only role is not checked", err)
		role = ""
	}
	stmts := []string{"ALTER DATABASE " + dbName + " SET default_transaction_read_only = on"}
	if role != "" {
		stmts = append([]string{
			"ALTER ROLE " + roleID + " SET default_transaction_read_only = on",
			"GRANT CONNECT ON DATABASE " + dbName + " TO " + roleID,
			"GRANT USAGE ON SCHEMA public TO " + roleID,
			"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + roleID,
		}, stmts...)
	}
	for _, stmt := range stmts {
		if _, err := b.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// Runs after the servers have stopped (cleanups run last-in first-out)
	// and before the database is dropped.
	// One statement string, so one session, made writable first.
	t.Cleanup(func() {
		if role == "" {
			return
		}
		stmt := "SET default_transaction_read_only = off; DROP OWNED BY " + roleID + "; DROP ROLE " + roleID
		if _, err := b.ExecContext(context.Background(), stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	})
	readerURL := *u
	readerURL.User = url.UserPassword(role, password)

	targets := map[string]string{"owner": dbURL}
	if role != "" {
		targets["read-only role"] = readerURL.String()
	}
	// New sessions really are read-only.
	for _, target := range targets {
		conn, err := pgx.Connect(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		var ro string
		err = conn.QueryRow(ctx, "SHOW transaction_read_only").Scan(&ro)
		_, writeErr := conn.Exec(ctx, "CREATE TEMP TABLE probe (x int)")
		_ = conn.Close(ctx)
		if err != nil || ro != "on" || writeErr == nil {
			t.Fatalf("session is not read-only: transaction_read_only=%q (%v), temp table write err=%v", ro, err, writeErr)
		}
	}

	for who, target := range targets {
		servesRESTCases(t, "as "+who, target)
	}
}

// graphQLReads sends a GraphQL query that reads the database and fails the
// test on a non-200 answer or any error in it.
func graphQLReads(t *testing.T, name, base string) {
	t.Helper()
	query := `{"query":"{ topic(id: \"0.0.7\") { __typename } topics(first: 2) { __typename } }"}`
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewBufferString(query))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		t.Logf("%s: no GraphQL endpoint (404): GraphQL not checked", name)
		return
	}
	var out struct {
		Data   map[string]any    `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || len(out.Errors) > 0 || out.Data["topic"] == nil {
		t.Errorf("%s: GraphQL on a read-only database: %d %s", name, resp.StatusCode, body)
	}
}

// TestHotStandby runs mirrorql against a real hot-standby replica: a
// PostgreSQL cluster of the test's own, a standby made from it with
// a base backup, streaming and in recovery (where every transaction is
// read-only and any write fails). Every REST case answers exactly as on the
// primary, and the GraphQL face answers without errors.
func TestHotStandby(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, w := migratedCluster(t)
	seedREST(t, w)
	var lsn string
	if err := w.NewRaw("SELECT pg_current_wal_lsn()::text").Scan(ctx, &lsn); err != nil {
		t.Fatal(err)
	}

	standby, err := primary.StartStandby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop() })
	conn, err := pgx.Connect(ctx, standby.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var inRecovery, caughtUp bool
	for deadline := time.Now().Add(patience); ; { // replay is the standby's pace: only a standby that never catches up fails
		err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", lsn).
			Scan(&inRecovery, &caughtUp)
		if err != nil {
			t.Fatal(err)
		}
		if caughtUp || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !inRecovery || !caughtUp {
		t.Fatalf("standby: in recovery %v, replayed the seed %v", inRecovery, caughtUp)
	}
	if _, err := conn.Exec(ctx, "CREATE TEMP TABLE probe (x int)"); err == nil {
		t.Fatal("the standby accepted a write")
	}

	servesRESTCases(t, "on a hot standby", standby.URL())
}
