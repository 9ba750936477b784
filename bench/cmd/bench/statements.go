package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"mirrorql/bench/handler"
	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/tools/stmtlog"
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
	route      string // buildRoutes' name
	script     string
	statements int // in the script: a transaction of the script is one request
	floor
}

// recordingDB is a one-connection query layer on d, as the service's
// (prepared statements over pgx), that records the statements it sends.
func recordingDB(d *dataset) (*db.DB, *stmtlog.Log, error) {
	qdb, err := db.Open(db.Options{URL: d.url, Prepare: true, PoolSize: 1})
	if err != nil {
		return nil, nil, err
	}
	// as the service does at start: on the v2 layout the statements are
	// v2's, read from the partitions
	if _, err := qdb.LearnLayout(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		qdb.Close()
		return nil, nil, err
	}
	rec := &stmtlog.Log{}
	qdb.Record(rec)
	return qdb, rec, nil
}

// sentStatements serves one request per path through the service's handler
// in process and returns the statements each sent, in order.
// qdb records its statements in rec.
func sentStatements(ctx context.Context, qdb *db.DB, rec *stmtlog.Log, paths []routePath) ([][]stmtlog.Statement, error) {
	h, err := newInProcess(ctx, qdb, rec)
	if err != nil {
		return nil, err
	}
	return h.sent(ctx, paths)
}

// inProcess is the service's handler on qdb, in process, with and without
// the schedules response cache, whose statements qdb records in rec.
type inProcess struct {
	qdb              *db.DB
	rec              *stmtlog.Log
	cached, uncached *echo.Echo
}

// newInProcess makes both handlers and waits for their start to end: each
// learns the database's layout again from a goroutine of its own as it
// starts (db.KeepLayout), and those statements are no request's. Their
// later refreshes are an hour away, past any capture.
func newInProcess(ctx context.Context, qdb *db.DB, rec *stmtlog.Log) (*inProcess, error) {
	slow := func(c *config.Config) { c.LayoutRefresh = time.Hour }
	h := &inProcess{qdb: qdb, rec: rec, cached: handler.NewWith(qdb, nil, slow),
		uncached: handler.NewWith(qdb, nil, func(c *config.Config) { slow(c); c.CacheEnabled = false })}
	return h, untilQuiet(ctx, rec, 100*time.Millisecond, 5*time.Second)
}

// untilQuiet waits until rec has recorded something and then nothing for three
// polls every poll, at most for most, and drops what it recorded.
func untilQuiet(ctx context.Context, rec *stmtlog.Log, poll, most time.Duration) error {
	seen, quiet := false, 0
	for deadline := time.Now().Add(most); time.Now().Before(deadline) && (!seen || quiet < 3); {
		if err := sleepCtx(ctx, poll); err != nil {
			return err
		}
		if len(rec.Take()) > 0 {
			seen, quiet = true, 0
		} else {
			quiet++
		}
	}
	rec.Take()
	return nil
}

// sent serves one request per path and returns the statements each sent,
// in order.
func (h *inProcess) sent(ctx context.Context, paths []routePath) ([][]stmtlog.Statement, error) {
	out := make([][]stmtlog.Statement, len(paths))
	for i, p := range paths {
		e := h.cached
		if p.uncached {
			e = h.uncached
		}
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, p.path, nil)
		if p.body != "" {
			req = httptest.NewRequestWithContext(ctx, http.MethodPost, p.path, strings.NewReader(p.body))
			req.Header.Set("Content-Type", "application/json")
		}
		h.rec.Take()
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK || (p.body != "" && !noGraphQLErrors(w.Body.Bytes())) {
			return nil, fmt.Errorf("%s: status %d: %s", p.path, w.Code, w.Body)
		}
		out[i] = h.rec.Take()
	}
	return out, nil
}

// routePath is one request of a route as the in-process handler serves it.
type routePath struct {
	route, path string
	body        string // JSON of a POST (GraphQL); "" for a GET
	uncached    bool   // to a handler without the schedules response cache
	shown       string // the request as the report shows it; "" for GET path
}

// messagePaths are one request of each message route, on the hot topic.
func messagePaths(d *dataset) []routePath {
	o := d.opts
	mid := o.TopicMessages(0) / 2
	hot := entity(o.TopicID(0))
	return []routePath{
		{route: "by-sequence", path: fmt.Sprintf("/api/v1/topics/%s/messages/%d", hot, mid)},
		{route: "by-timestamp", path: "/api/v1/topics/messages/" + timestamp(o.MessageTimestamp(0, mid))},
		{route: "list-25", path: fmt.Sprintf("/api/v1/topics/%s/messages?limit=25", hot)},
		{route: "list-gt-100", path: fmt.Sprintf("/api/v1/topics/%s/messages?sequencenumber=gt:%d&limit=100", hot, mid)},
	}
}

// floorPaths are the routes whose statements are run alone in pgbench and
// explained: the message routes, the uncached schedules list (a full page
// from the middle of the schedules) and the activity query of the hot
// topic's history.
func floorPaths(d *dataset) []routePath {
	o := d.opts
	lo := o.FirstScheduleNum() + int64(o.Schedules/2)
	vars := map[string]any{"t": entity(o.TopicID(0)), "from": timestamp(d.window.from), "to": timestamp(d.window.to),
		"b": activityBuckets}
	body, _ := json.Marshal(map[string]any{"query": gqlActivityQuery, "variables": vars})
	return append(messagePaths(d),
		routePath{route: "schedules-uncached", path: fmt.Sprintf("/api/v1/schedules?schedule.id=gte:%s&limit=25", entity(lo)),
			uncached: true},
		routePath{route: "gql-activity", path: "/graphql", body: string(body),
			shown: fmt.Sprintf("GraphQL `topic(id: %q) { activity(from: %q, to: %q, buckets: %d) { messages } }`",
				entity(o.TopicID(0)), timestamp(d.window.from), timestamp(d.window.to), activityBuckets)})
}

// statementFloors runs, for each route of floorPaths, the statements its
// handler sends with pgbench at conns connections (-M prepared) for dur, as
// one script (a transaction of the script is a request): the parameter the
// benchmark's requests draw at random is drawn by pgbench the same way, the
// others keep the values the handler sent.
func statementFloors(ctx context.Context, d *dataset, conns int, dur time.Duration, mon *pgMonitor) ([]statementFloor, error) {
	qdb, rec, err := recordingDB(d)
	if err != nil {
		return nil, err
	}
	defer qdb.Close()
	paths := floorPaths(d)
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
	first := o.FirstScheduleNum()
	// Per route: the script of the statements it sent.
	scripts := map[string]func([]stmtlog.Statement) (string, error){
		"by-sequence":  oneDrawn(2, byKey("seq"), keyDraw),
		"by-timestamp": oneDrawn(1, byKey("ts"), keyDraw),
		"list-25":      oneDrawn(1, ":topic", fmt.Sprintf("\\set topic random(%d, %d)", o.TopicID(0), o.TopicID(o.Topics-1))),
		"list-gt-100":  oneDrawn(2, ":lo", fmt.Sprintf("\\set lo random(1, %d)", hot-99)),
		// the page from a random schedule id, as the route's requests
		// draw it, and the signatures of the page's schedules
		"schedules-uncached": schedulesScript(fmt.Sprintf("\\set n random(%d, %d)", first, first+int64(max(o.Schedules-25, 1))-1)),
		// the same request every time
		"gql-activity": literalScript,
	}
	if err := createKeys(ctx, d); err != nil {
		return nil, err
	}
	defer dropKeys(context.WithoutCancel(ctx), d)
	var out []statementFloor
	for i, p := range paths {
		sf := statementFloor{route: p.route, statements: len(sent[i])}
		if sf.script, err = scripts[p.route](sent[i]); err != nil {
			return out, fmt.Errorf("%s: %w", p.route, err)
		}
		sf.floor, err = runPgbench(ctx, d, conns, "prepared", dur, mon, p.route+".sql", []string{sf.script + "\n"})
		if err != nil {
			return out, err
		}
		out = append(out, sf)
	}
	return out, nil
}

// oneDrawn is the script of a route that sends one statement, its
// parameter param drawn by draw as expr.
func oneDrawn(param int, expr, draw string) func([]stmtlog.Statement) (string, error) {
	return func(sent []stmtlog.Statement) (string, error) {
		if len(sent) != 1 {
			return "", fmt.Errorf("%d statements sent, not 1", len(sent))
		}
		sql, err := pgbenchSQL(sent[0], param, expr)
		return draw + "\n" + sql, err
	}
}

// literalScript is the statements as they were sent, values and all.
func literalScript(sent []stmtlog.Statement) (string, error) {
	var lines []string
	for _, st := range sent {
		sql, err := pgbenchSQL(st, 0, "")
		if err != nil {
			return "", err
		}
		lines = append(lines, sql)
	}
	return strings.Join(lines, "\n"), nil
}

// schedulesScript is the schedules list's script: its page from :n (the
// range's start, parameter 1) and the signatures of the page, whose ids
// (the array, parameter 1) are written as :n plus their offsets from the
// start the page was sent with (the seed's schedule ids are consecutive).
func schedulesScript(draw string) func([]stmtlog.Statement) (string, error) {
	return func(sent []stmtlog.Statement) (string, error) {
		if len(sent) != 2 || len(sent[0].Args) == 0 || len(sent[1].Args) != 1 {
			return "", fmt.Errorf("want the page and its signatures, two fixed statements; sent %d", len(sent))
		}
		lo, ok1 := sent[0].Args[0].(int64)
		ids, ok2 := sent[1].Args[0].(string)
		if !ok1 || !ok2 {
			return "", fmt.Errorf("unexpected parameters %v, %v", sent[0].Args, sent[1].Args)
		}
		var terms []string
		for _, v := range strings.Split(strings.Trim(ids, "{}"), ",") {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", fmt.Errorf("signatures' ids %q: %w", ids, err)
			}
			term := ":n::bigint"
			if id != lo {
				term += fmt.Sprintf(" + %d", id-lo)
			}
			terms = append(terms, term)
		}
		page, err := pgbenchSQL(sent[0], 1, ":n")
		if err != nil {
			return "", err
		}
		sigs, err := pgbenchSQL(sent[1], 1, "ARRAY["+strings.Join(terms, ", ")+"]")
		return draw + "\n" + page + "\n" + sigs, err
	}
}

var paramRE = regexp.MustCompile(`\$(\d+)`)

// pgbenchSQL is st's SQL with parameter vary written as expr and the others
// as literals of the values st was sent with.
func pgbenchSQL(st stmtlog.Statement, vary int, expr string) (string, error) {
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
