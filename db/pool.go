package db

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
	"mirrorql/redact"
)

// Options configure the pool.
type Options struct {
	URL string
	// Conn, when set, is the connection's configuration already made
	// (config makes it from separate settings, whose password is never
	// written into a URL); URL is then unused. Open works on a copy.
	Conn             *pgx.ConnConfig
	PoolSize         int
	StatementTimeout time.Duration
	ConnectTimeout   time.Duration
	// Prepare lets pgx prepare the fixed statements of the message routes
	// once per connection (named statements, binary results). Turn it off
	// behind a pooler that cannot carry prepared statements from one
	// transaction to the next (PgBouncer in transaction mode before 1.21).
	Prepare bool
	// Coalesce is how many point lookups of one kind (a message by
	// sequence number, by timestamp) run side by side with statements of
	// their own; beyond that they share statements (coalescer). 0 sends one
	// statement per lookup.
	Coalesce int
	// LookupMode: whether reads on the v2 layout find a topic's partitions
	// in topic_message_lookup (MIRRORQL_TOPIC_MESSAGE_LOOKUP).
	LookupMode LookupMode
	// ReadOnly makes every session read-only (default_transaction_read_only),
	// whatever its user may do: for a database that is someone else's,
	// which the service must not change even when given a user that could.
	ReadOnly bool
}

// DB is the query layer over one pool, and the core's store as it is: its
// reads take app's filters and types and fail in app's errors (failed,
// exec.go).
type DB struct {
	bun     *bun.DB
	health  *Health
	size    int      // the pool's most open connections
	prepare bool     // over pgx: prepare the fixed statements (pgx.QueryExecModeCacheStatement)
	log     Recorder // nil but in tests and the benchmark's EXPLAIN

	bySequence  *coalescer[app.TopicSequence, *model.TopicMessage]
	byTimestamp *coalescer[model.Timestamp, *model.TopicMessage]

	// The reader of the layout learned last, and that layout (reader.go):
	// nil until LearnLayout, when the reads are unlearned's, v1's. env is
	// what d hands its readers.
	current    atomic.Pointer[driver.Current]
	unlearned  driver.Reader
	env        driver.Env
	lookupMode LookupMode
}

var (
	_ app.Store     = (*DB)(nil)
	_ app.LiveStore = (*DB)(nil)
)

// Open creates the pool; it does not wait for the database to answer, so the
// service can start (and report itself unready) while the database is down.
func Open(o Options) (*DB, error) {
	cfg, err := o.connConfig()
	if err != nil {
		return nil, err
	}
	if o.ConnectTimeout > 0 {
		cfg.ConnectTimeout = o.ConnectTimeout
	}
	cfg.DialFunc = lingerDial(cfg.DialFunc)
	// When a request's deadline passes, ask the server to cancel its
	// query and keep the connection, rather than pgx's default of
	// breaking the connection off (the pool would then open another
	// while the server still ran the abandoned query). The server
	// answers a cancel in milliseconds; one that does not within
	// cancelWait has the connection cut after all.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelWait}
	}
	// bun interpolates arguments into the SQL text, so every statement is
	// new to the server: preparing it (pgx's default) costs a round trip
	// and fills the statement cache for nothing, and breaks behind
	// PgBouncer's transaction pooling.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// connector: a password PostgreSQL's SCRAM and md5 take in different
	// forms logs in with either (login.go).
	sqldb := sql.OpenDB(connector(*cfg, stdlib.OptionAfterConnect(o.afterConnect)))
	size := o.PoolSize
	if size < 1 {
		size = 10
	}
	sqldb.SetMaxOpenConns(size)
	// Idle connections are kept, not closed after a while: a pool that
	// shrank in a quiet hour would open its connections again when load
	// returns, each one a connect a request waits on while the server is
	// busiest (Warm). A connection that broke meanwhile is replaced on use.
	sqldb.SetMaxIdleConns(size)
	b := bun.NewDB(sqldb, pgdialect.New())
	h := &Health{}
	b.AddQueryHook(h)
	d := &DB{bun: b, health: h, prepare: o.Prepare, lookupMode: o.LookupMode, size: size}
	d.setEnv()
	d.pointLookups(o.Coalesce)
	return d, nil
}

// afterConnect sets up a new connection of the pool. The statement timeout
// is SET once connected rather than sent as a start-up parameter, which
// PgBouncer refuses ("unsupported startup parameter") unless told to
// ignore it, and then would not apply it.
func (o Options) afterConnect(ctx context.Context, conn *pgx.Conn) error {
	if o.StatementTimeout > 0 {
		ms := strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
		if _, err := conn.Exec(ctx, "SELECT set_config('statement_timeout', $1, false)", ms); err != nil {
			return err
		}
	}
	if o.ReadOnly {
		if _, err := conn.Exec(ctx, setReadOnly); err != nil {
			return err
		}
	}
	if o.Prepare {
		if _, err := conn.Exec(ctx, SetPlanMode); err != nil {
			return err
		}
	}
	_, err := conn.Exec(ctx, setConnectionCheck)
	if code, ok := driver.SQLState(err); ok && code == "42704" { // PostgreSQL < 14
		err = nil
	}
	return err
}

// connConfig is o.Conn's copy, else o.URL parsed.
func (o Options) connConfig() (*pgx.ConnConfig, error) {
	if o.Conn != nil {
		return o.Conn.Copy(), nil
	}
	cfg, err := pgx.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("database url: %s", redact.Secret(err.Error(), o.URL))
	}
	return cfg, nil
}

// KeptBytes is about what the service keeps for the v2 layout (0 on v1):
// the topic maps, and the descriptions pgx keeps of the statements made for
// partitions (the texts driver.Texts keeps), on every connection, up to pgx's
// statement cache capacity.
func (d *DB) KeptBytes() int64 { return count(d.reader(), driver.Bookkeeper.KeptBytes) }

// TopicMapBytes is about what the kept topic maps hold (0 on v1).
func (d *DB) TopicMapBytes() int64 { return count(d.reader(), driver.Bookkeeper.MapBytes) }

// cancelWait is how long pgx waits for the server to cancel a query whose
// context ended before it gives the connection up.
const cancelWait = time.Second

// SetPlanMode has the server plan each prepared statement once, for any
// values. The prepared statements are written for that (a range and an
// exclusion list per column, an index probe per key); left to choose, the
// server compares the generic plan's estimate with the plans for the first
// values, and kept planning the batch lookups for their values on every
// execution (their arrays make a small batch look cheaper than the generic
// plan's guess of ten keys), a cost the by-sequence route paid in the
// server's CPU. The EXPLAIN tests check the generic plans.
//
// A Citus coordinator is the exception: it makes a generic plan only of a
// statement on one distributed table filtered by its distribution column
// alone, and refuses the others when they are executed ("could not create
// distributed plan"), so there each execution is planned for its values,
// which also routes it to its shard then. The session asks its own server,
// so that a pool learns nothing before its first connection. Exported for
// explain, which shows the plans the service's sessions get.
const SetPlanMode = "SELECT set_config('plan_cache_mode', CASE WHEN EXISTS " +
	"(SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN 'force_custom_plan' ELSE 'force_generic_plan' END, false)"

// setReadOnly is Options.ReadOnly. A session setting rather than a start-up
// parameter, as the statement timeout is, for the same reason (PgBouncer).
const setReadOnly = "SET default_transaction_read_only = on"

// setConnectionCheck has the server check for a closed client every 250 ms
// while it runs a query (PostgreSQL 14+; older servers answer 42704, which
// is ignored). A connection pgx gives up on (a cancel not answered within
// cancelWait) would otherwise leave the server running the abandoned query
// until its statement timeout, or until a lock it waits on is granted. With
// it the backend ends within 250 ms, and lingerDial has the pool wait for
// that before it opens a replacement.
const setConnectionCheck = "SET client_connection_check_interval = 250"

// Wrap builds the query layer over an existing bun handle over pgx's
// database/sql driver (tests, migrations); it prepares the fixed
// statements, as a pool from Open does.
func Wrap(b *bun.DB) *DB {
	size := b.Stats().MaxOpenConnections
	if size < 1 {
		size = 10 // unbounded: counted as Open's default
	}
	d := &DB{bun: b, health: &Health{}, prepare: true, size: size}
	d.setEnv()
	d.pointLookups(DefaultCoalesce)
	// Learn the layout now, as the service does at start, so that a test
	// on the v2 layout reads it by partition; a database that does not
	// answer is read as v1 until LearnLayout is called again.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = d.LearnLayout(ctx, slog.New(slog.DiscardHandler))
	return d
}

// DefaultCoalesce is Options.Coalesce unless configured (MIRRORQL_DB_COALESCE).
const DefaultCoalesce = 4

// Recorder is told of every statement the query layer sends: bun's as a
// query hook, and those sent over pgx directly, with their arguments, by
// Sent (stmtlog.Log, for tests and the benchmark's EXPLAIN).
type Recorder interface {
	bun.QueryHook
	Sent(sql string, args []any, unprepared bool)
}

// Record has every statement the query layer sends, with its arguments,
// told to l (tests count them and EXPLAIN them).
func (d *DB) Record(l Recorder) {
	d.bun.AddQueryHook(l)
	d.log = l
}

// Health follows whether the database answers (fed by every query of a pool
// made by Open, and by Ping) and logs each change of state once.
func (d *DB) Health() *Health { return d.health }

// Bun exposes the handle for migrations, seeding and query hooks.
func (d *DB) Bun() *bun.DB { return d.bun }

// Ping checks that the database answers.
// The outcome feeds Health.
func (d *DB) Ping(ctx context.Context) error {
	err := d.bun.PingContext(ctx)
	d.health.observeIn(ctx, err)
	return err
}

// Warm opens the pool's connections, all of them, and leaves them idle in
// it. The service calls it before it serves: then no request of the first
// burst of load connects on its own (a connect that fails, or outlasts the
// connect timeout on a server made slow by that very load, is a 503), but
// each waits within its deadline for one of the pool's connections, as it
// would on a busy warm service. It returns how many connections the pool
// has open, and the first error when it could not open them all (the
// service then starts anyway, filling the pool on demand).
func (d *DB) Warm(ctx context.Context) (int, error) {
	conns := make([]*sql.Conn, d.size)
	errs := make([]error, d.size)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			// Holding every connection until all are open is what makes
			// database/sql open new ones rather than hand back an idle one.
			c, err := d.bun.DB.Conn(ctx)
			if err == nil {
				err = c.PingContext(ctx)
			}
			conns[i], errs[i] = c, err
		})
	}
	wg.Wait()
	for _, c := range conns {
		if c != nil {
			_ = c.Close()
		}
	}
	var err error
	for _, e := range errs {
		if e != nil {
			err = e
			break
		}
	}
	d.health.observeIn(ctx, err)
	return d.bun.DB.Stats().OpenConnections, err
}

// Close closes the pool.
func (d *DB) Close() error { return d.bun.Close() }
