package db

import (
	"context"

	"mirrorql/db/internal/driver"
	v1 "mirrorql/db/internal/v1"
	v2 "mirrorql/db/internal/v2"
)

// The reads that differ between the layouts are a driver.Reader's
// (db/internal/driver: ten methods, the reads and Next), one package per
// layout: v1 (db/internal/v1) and v2 (db/internal/v2, Citus's reader in it
// the v2 reader with the reads a coordinator answers otherwise
// overridden). What a reader keeps account of beside its answers is the
// optional driver.Bookkeeper, which only the v2 reader implements.

// count is what r's bookkeeper says, zero for a reader that keeps none.
func count[T int | int64](r driver.Reader, of func(driver.Bookkeeper) T) T {
	if b, ok := r.(driver.Bookkeeper); ok {
		return of(b)
	}
	return 0
}

// reader is the reader of the layout learned last; before LearnLayout, v1's
// (the statements of the plain tables are right on either layout).
func (d *DB) reader() driver.Reader {
	if r := d.current.Load(); r != nil {
		return r.Reader
	}
	return d.unlearned
}

// newReader is the reader of layout l to follow prev (nil: none), the one
// place that chooses among the variants: v1's on plain tables; v2's on
// partitioned tables, on one PostgreSQL server or on a Citus coordinator
// (v2.NewCitus: the v2 reader with the reads a coordinator answers
// otherwise overridden), and on Citus without partitions too, where the v1
// batches would be multi-shard statements (every read is then one topic's,
// from the tables themselves). A v2 reader goes on with the state of the v2
// readers before it (prev's, when prev is one).
func newReader(ctx context.Context, d *DB, l Layout, prev driver.Reader) (driver.Reader, error) {
	switch {
	case l.Citus:
		return v2.NewCitus(ctx, &d.env, l, prev)
	case !l.Partitioned():
		return v1.New(&d.env, l), nil
	}
	return v2.New(ctx, &d.env, l, prev)
}

// setEnv makes what d hands its readers (driver.Env), and the reader
// before the layout is learned.
func (d *DB) setEnv() {
	d.env = driver.Env{Exec: (*executor)(d), Conns: d.size, Current: &d.current,
		Choose: func(ctx context.Context, l Layout, prev driver.Reader) (driver.Reader, error) {
			return newReader(ctx, d, l, prev)
		}}
	d.unlearned = v1.New(&d.env, Layout{})
}
