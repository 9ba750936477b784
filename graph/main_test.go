package graph_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

func TestMain(m *testing.M) { testdb.Main(m) }

//go:embed testdata/fixture.sql
var fixtureSQL string

// fixedNow is the clock of the tests: after schedule 0.0.2001's expiration,
// long before 0.0.2003's.
var fixedNow = time.Unix(1_300_000_000, 0)

// env is one test's database, handler and statement counter.
type env struct {
	url     string
	bun     *bun.DB
	db      *db.DB
	handler http.Handler
	client  *client.Client
	stmts   *stmtlog.Log
}

func newEnv(t *testing.T, fixture string, o graph.Options) *env {
	t.Helper()
	return newEnvWith(t, testdb.Layout(), fixture, app.Rules{}, o)
}

// newEnvLayout is newEnv on a database of the given layout, whatever
// MIRRORQL_TEST_LAYOUT says.
func newEnvLayout(t *testing.T, layout, fixture string, o graph.Options) *env {
	t.Helper()
	return newEnvWith(t, layout, fixture, app.Rules{}, o)
}

// newEnvWith is newEnvLayout with the core's rules r.
func newEnvWith(t *testing.T, layout, fixture string, r app.Rules, o graph.Options) *env {
	t.Helper()
	url, b := testdb.NewLayout(t, layout)
	if fixture != "" {
		if _, err := b.DB.ExecContext(context.Background(), fixture); err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	counter := &stmtlog.Log{}
	if o.Now == nil {
		o.Now = func() time.Time { return fixedNow }
	}
	d := db.Wrap(b)
	d.Record(counter)
	h := graph.NewHandler(app.New(d, r), o)
	return &env{url: url, bun: b, db: d, handler: h, client: client.New(h), stmts: counter}
}

// result is a GraphQL response decoded generically.
type result struct {
	Data   any        `json:"data"`
	Errors []gqlError `json:"errors"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// do runs query through the gqlgen test client and decodes the whole answer.
func (e *env) do(t *testing.T, query string, vars map[string]any) result {
	t.Helper()
	var opts []client.Option
	for k, v := range vars {
		opts = append(opts, client.Var(k, v))
	}
	resp, err := e.client.RawPost(query, opts...)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	r := result{Data: resp.Data}
	if len(resp.Errors) > 0 {
		if err := json.Unmarshal(resp.Errors, &r.Errors); err != nil {
			t.Fatalf("errors: %v (%s)", err, resp.Errors)
		}
	}
	return r
}

// mustJSON decodes a literal expected value.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad expected JSON %q: %v", s, err)
	}
	return v
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
