package db

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"mirrorql/db/internal/driver"
)

// Pipeline runs fixed statements as query does, but sends them all at once
// and reads their results in order: one round trip for the lot. On the v2
// layout a batch of lookups is a statement per partition (or per topic on
// Citus, where a statement over several topics would go to every shard);
// sent one after another they cost a round trip each, which is most of a
// point lookup's time (coalesce.go), and a batch would be slower than its
// lookups side by side. Pipelined they cost about what v1's one statement
// over unnest(…) costs.
//
// Each statement is prepared on the connection under its own text, which
// query's statement cache then finds too. Without prepared statements
// (behind a pooler in transaction mode, or over pgdriver) the statements go
// one by one. Its error is app's, as query's. (The executor's: only the
// readers send pipelines.)
func (e *executor) Pipeline(ctx context.Context, ps []driver.Piped) error {
	d := (*DB)(e)
	if len(ps) == 1 || !d.prepare {
		for _, s := range ps {
			if err := d.run(ctx, s.Read, d.prepare, s.SQL, s.Args); err != nil {
				return err
			}
		}
		return nil
	}
	if d.log != nil {
		for _, s := range ps {
			d.log.Sent(s.SQL, s.Args, false)
		}
	}
	err := d.pipelinePgx(ctx, ps)
	d.health.observeIn(ctx, err)
	return failed(err)
}

func (d *DB) pipelinePgx(ctx context.Context, ps []driver.Piped) error {
	conn, err := d.bun.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		err := sendPipeline(ctx, c, ps)
		if err != nil && c.IsClosed() {
			return badConn{err} // as queryPgx: database/sql must drop the connection
		}
		return err
	})
}

func sendPipeline(ctx context.Context, c *pgx.Conn, ps []driver.Piped) error {
	var b pgconn.Batch
	// One builder for the lot: the batch encodes each statement's values
	// at once, and keeps only its result formats, which go into formats,
	// a slice of them each (appended, never written over).
	var eqb pgx.ExtendedQueryBuilder
	var formats []int16
	for _, s := range ps {
		sd, err := c.Prepare(ctx, s.SQL, s.SQL)
		if err != nil {
			return err
		}
		if err := eqb.Build(c.TypeMap(), sd, s.Args); err != nil {
			return err
		}
		if formats == nil {
			formats = make([]int16, 0, len(ps)*len(eqb.ResultFormats))
		}
		start := len(formats)
		formats = append(formats, eqb.ResultFormats...)
		b.ExecStatement(sd, eqb.ParamValues, eqb.ParamFormats, formats[start:len(formats):len(formats)])
	}
	results := c.PgConn().ExecBatch(ctx, &b)
	for i := 0; results.NextResult(); i++ {
		rows := pgx.RowsFromResultReader(c.TypeMap(), results.ResultReader())
		err := ps[i].Read(rows)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			results.Close()
			return err
		}
	}
	return results.Close()
}
