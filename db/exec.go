package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"mirrorql/app"
	"mirrorql/model"
)

// rowSource is what scanning needs of a result (pgx's rows; tests hand in
// their own).
type rowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// query runs one of the query layer's fixed statements, its values bound as
// parameters ($1, …) rather than written into the text, so that the server
// parses and plans it once per connection instead of once per request, and
// hands the rows to read (which must not keep them). Over pgx it borrows
// the pool's connection and reads pgx's rows directly: database/sql would
// box every value and copy every byte string twice, which showed in the
// profile of the 100-row page. Those statements bypass bun's query hooks,
// so it feeds Health and the statement log itself. Its error is app's
// (failed).
func (d *DB) query(ctx context.Context, read func(rowSource) error, query string, args ...any) error {
	return d.run(ctx, read, d.prepare, query, args)
}

// queryPlanned is query for a statement whose best plan depends on its
// values: it is never prepared, so the server plans it for them every time
// rather than settling on a generic plan.
func (d *DB) queryPlanned(ctx context.Context, read func(rowSource) error, query string, args ...any) error {
	return d.run(ctx, read, false, query, args)
}

func (d *DB) run(ctx context.Context, read func(rowSource) error, prepare bool, query string, args []any) error {
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
// (run, pipeline, the catalog's loadPartitions), as a lookup that stopped
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

func (d *DB) queryPgx(ctx context.Context, read func(rowSource) error, prepare bool, query string, args []any) error {
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

// int64Array is vs as a PostgreSQL array literal ("{1,2}"): a text value
// bound to a bigint[] parameter, one the EXPLAIN tests can write as a
// literal.
func int64Array[T ~int64](vs []T) string {
	b := make([]byte, 0, 2+len(vs)*20)
	b = append(b, '{')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, '}'))
}

// notArray is the range's exclusion list as an int64Array.
func notArray(r model.Range) string { return int64Array(r.Not) }

// badConn is a connection-level failure: it is driver.ErrBadConn to
// database/sql and to Unavailable, and prints as its cause.
type badConn struct{ cause error }

func (e badConn) Error() string   { return e.cause.Error() }
func (e badConn) Unwrap() []error { return []error{e.cause, driver.ErrBadConn} }
