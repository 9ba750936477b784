package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/bench/handler"
	"mirrorql/db"
)

// A route can serve no more requests a second than PostgreSQL serves its
// statement to pgbench alone: the service only adds work on the same two
// cores. Each message route's own statement is therefore run with pgbench
// in the same run as the floor; a target above that rate cannot be met on
// this machine whatever the service does, and the ratio between two routes'
// statements bounds the ratio between the routes.

// keysTable maps 1…N to the hot topic's sequence numbers and timestamps, so
// that pgbench (which draws only random integers) can look a message up by
// a random existing timestamp. The by-sequence statement is measured
// through it as well, so that the two point lookups are compared like for
// like. It exists only while the statement floors run.
const keysTable = "bench_keys"

// statementFloor is one route's statement run alone with pgbench.
type statementFloor struct {
	route  string // buildRoutes' name
	script string
	floor
}

// recordingDB is a one-connection query layer on d, as the service's
// (prepared statements over pgx), that records the statements it sends.
func recordingDB(d *dataset) (*db.DB, *db.StatementLog, error) {
	qdb, err := db.Open(db.Options{URL: d.url, Driver: "pgx", Prepare: true, PoolSize: 1})
	if err != nil {
		return nil, nil, err
	}
	rec := &db.StatementLog{}
	qdb.Record(rec)
	return qdb, rec, nil
}

// sentStatements serves one request per path through the REST handlers in
// process and returns the statements each sent, in order.
// qdb records its statements in rec.
func sentStatements(ctx context.Context, qdb *db.DB, rec *db.StatementLog, paths []routePath) ([][]db.Statement, error) {
	e := handler.New(qdb, nil)
	out := make([][]db.Statement, len(paths))
	for i, p := range paths {
		rec.Take()
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodGet, p.path, nil))
		if w.Code != http.StatusOK {
			return nil, fmt.Errorf("%s: status %d: %s", p.path, w.Code, w.Body)
		}
		out[i] = rec.Take()
	}
	return out, nil
}

type routePath struct{ route, path string }

// messagePaths are one request of each message route, on the hot topic.
func messagePaths(d *dataset) []routePath {
	o := d.opts
	mid := o.TopicMessages(0) / 2
	hot := entity(o.TopicID(0))
	return []routePath{
		{"by-sequence", fmt.Sprintf("/api/v1/topics/%s/messages/%d", hot, mid)},
		{"by-timestamp", "/api/v1/topics/messages/" + timestamp(o.MessageTimestamp(0, mid))},
		{"list-25", fmt.Sprintf("/api/v1/topics/%s/messages?limit=25", hot)},
		{"list-gt-100", fmt.Sprintf("/api/v1/topics/%s/messages?sequencenumber=gt:%d&limit=100", hot, mid)},
	}
}

// statementFloors runs, for each message route, the statement its handler
// sends with pgbench at conns connections (-M prepared) for dur: the
// parameter the benchmark's requests draw at random is drawn by pgbench the
// same way, the others keep the values the handler sent.
func statementFloors(ctx context.Context, d *dataset, conns int, dur time.Duration, mon *pgMonitor) ([]statementFloor, error) {
	qdb, rec, err := recordingDB(d)
	if err != nil {
		return nil, err
	}
	defer qdb.Close()
	paths := messagePaths(d)
	sent, err := sentStatements(ctx, qdb, rec, paths)
	if err != nil {
		return nil, err
	}
	o := d.opts
	hot := o.TopicMessages(0)
	byKey := func(column string) string {
		return fmt.Sprintf("(SELECT %s FROM %s WHERE i = :i)", column, keysTable)
	}
	keyDraw := fmt.Sprintf("\\set i random(1, %d)", hot)
	// Per route: which parameter is drawn, as what, and the draw.
	draws := map[string]struct {
		param      int
		expr, draw string
	}{
		"by-sequence":  {2, byKey("seq"), keyDraw},
		"by-timestamp": {1, byKey("ts"), keyDraw},
		"list-25":      {1, ":topic", fmt.Sprintf("\\set topic random(%d, %d)", o.TopicID(0), o.TopicID(o.Topics-1))},
		"list-gt-100":  {2, ":lo", fmt.Sprintf("\\set lo random(1, %d)", hot-99)},
	}
	if err := createKeys(ctx, d); err != nil {
		return nil, err
	}
	defer dropKeys(context.WithoutCancel(ctx), d)
	var out []statementFloor
	for i, p := range paths {
		if len(sent[i]) != 1 {
			return out, fmt.Errorf("%s sent %d statements, not 1", p.path, len(sent[i]))
		}
		dr := draws[p.route]
		sql, err := pgbenchSQL(sent[i][0], dr.param, dr.expr)
		if err != nil {
			return out, fmt.Errorf("%s: %w", p.route, err)
		}
		sf := statementFloor{route: p.route, script: dr.draw + "\n" + sql}
		sf.floor, err = runPgbench(ctx, d, conns, "prepared", dur, mon, p.route+".sql", sf.script+"\n")
		if err != nil {
			return out, err
		}
		out = append(out, sf)
	}
	return out, nil
}

var paramRE = regexp.MustCompile(`\$(\d+)`)

// pgbenchSQL is st's SQL with parameter vary written as expr and the others
// as literals of the values st was sent with.
func pgbenchSQL(st db.Statement, vary int, expr string) (string, error) {
	var err error
	sql := paramRE.ReplaceAllStringFunc(st.SQL, func(m string) string {
		k, _ := strconv.Atoi(m[1:])
		if k == vary {
			return expr
		}
		if k < 1 || k > len(st.Args) {
			err = fmt.Errorf("no value for %s", m)
			return m
		}
		lit, e := sqlLiteral(st.Args[k-1])
		if e != nil {
			err = e
		}
		return lit
	})
	return sql + ";", err
}

// sqlLiteral writes an integer or a string parameter as SQL.
func sqlLiteral(v any) (string, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.String:
		return "'" + strings.ReplaceAll(rv.String(), "'", "''") + "'", nil
	}
	return "", fmt.Errorf("no SQL literal for a %T", v)
}

func createKeys(ctx context.Context, d *dataset) error {
	c, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for _, q := range []string{
		"DROP TABLE IF EXISTS " + keysTable,
		fmt.Sprintf("CREATE TABLE %s AS SELECT (row_number() OVER (ORDER BY sequence_number))::int AS i, "+
			"sequence_number AS seq, consensus_timestamp AS ts FROM topic_message WHERE topic_id = %d", keysTable, d.opts.TopicID(0)),
		"ALTER TABLE " + keysTable + " ADD PRIMARY KEY (i)",
		"VACUUM ANALYZE " + keysTable,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func dropKeys(ctx context.Context, d *dataset) {
	if c, err := pgx.Connect(ctx, d.url); err == nil {
		_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+keysTable)
		c.Close(ctx)
	}
}
