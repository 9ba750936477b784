package db

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
)

// query runs one of the query layer's fixed statements, its values bound as
// parameters ($1, …) rather than written into the text, so that the server
// parses and plans it once per connection instead of once per request, and
// hands the rows to read (which must not keep them). Over pgx it borrows
// the pool's connection and reads pgx's rows directly: database/sql would
// box every value and copy every byte string twice, which showed in the
// profile of the 100-row page. Those statements bypass bun's query hooks,
// so it feeds Health and the statement log itself. Its error is app's
// (failed).
func (d *DB) query(ctx context.Context, read func(driver.RowSource) error, query string, args ...any) error {
	return d.run(ctx, read, d.prepare, query, args)
}

// queryPlanned is query for a statement whose best plan depends on its
// values: it is never prepared, so the server plans it for them every time
// rather than settling on a generic plan.
func (d *DB) queryPlanned(ctx context.Context, read func(driver.RowSource) error, query string, args ...any) error {
	return d.run(ctx, read, false, query, args)
}

// executor is d as what it hands its readers (driver.Exec): the one
// execution path, query's, and the pipeline.
type executor DB

var _ driver.Exec = (*executor)(nil)

func (e *executor) Query(ctx context.Context, read func(driver.RowSource) error, query string, args ...any) error {
	return (*DB)(e).run(ctx, read, e.prepare, query, args)
}

func (e *executor) QueryPlanned(ctx context.Context, read func(driver.RowSource) error, query string, args ...any) error {
	return (*DB)(e).run(ctx, read, false, query, args)
}

// QueryRows is bun's QueryContext: the catalog's reads (db/internal/v2).
func (e *executor) QueryRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return e.bun.QueryContext(ctx, query, args...)
}

func (e *executor) Failed(err error) error { return failed(err) }

func (d *DB) run(ctx context.Context, read func(driver.RowSource) error, prepare bool, query string, args []any) error {
	if d.log != nil {
		d.log.Sent(query, args, !prepare)
	}
	err := d.queryPgx(ctx, read, prepare, query, args)
	d.health.observeIn(ctx, err)
	return failed(err)
}

// failed is err in app's vocabulary, the one mapping of the query layer's
// failures: nil stays nil, an app.Unavailable stays as it is, and anything
// else becomes one, marked as an outage when the database could not be
// reached at all (Health logs that once per change of state, so a face need
// not per request). Every error a read returns starts as a statement's
// (run, Pipeline, the v2 catalog's loadPartitionSet), as a lookup that stopped
// waiting (coalescer.get), or as a check of the query layer's own (errStale,
// Activity's count of answers), and each of them goes through here; a read
// adds only app.ErrNotFound and the %w naming its question.
func failed(err error) error {
	var u *app.Unavailable
	if err == nil || errors.As(err, &u) {
		return err
	}
	return &app.Unavailable{Cause: err, Down: Unavailable(err)}
}

func (d *DB) queryPgx(ctx context.Context, read func(driver.RowSource) error, prepare bool, query string, args []any) error {
	conn, err := d.bun.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	mode := pgx.QueryExecModeSimpleProtocol
	if prepare {
		mode = pgx.QueryExecModeCacheStatement
	}
	bound := make([]any, 0, len(args)+1)
	bound = append(append(bound, mode), args...)
	return conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		rows, err := c.Query(ctx, query, bound...)
		if err == nil {
			err = read(rows)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil && c.IsClosed() {
			// The connection broke: database/sql must discard it rather
			// than hand it to the next request. The cause stays readable.
			return badConn{err}
		}
		return err
	})
}

// badConn is a connection-level failure: it is driver.ErrBadConn to
// database/sql and to Unavailable, and prints as its cause.
type badConn struct{ cause error }

func (e badConn) Error() string   { return e.cause.Error() }
func (e badConn) Unwrap() []error { return []error{e.cause, sqldriver.ErrBadConn} }
