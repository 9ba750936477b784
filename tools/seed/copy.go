package seed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Stats counts the rows written, per table.
type Stats struct {
	Entities              int64
	Topics                int64
	CustomFees            int64
	Schedules             int64
	TransactionSignatures int64
	TopicMessages         int64
	Transactions          int64
	Elapsed               time.Duration
}

// Rows is the number of rows written in all.
func (s Stats) Rows() int64 {
	return s.Entities + s.Topics + s.CustomFees + s.Schedules + s.TransactionSignatures + s.TopicMessages + s.Transactions
}

func (s Stats) String() string {
	return fmt.Sprintf("entity %d, topic %d, custom_fee %d, schedule %d, transaction_signature %d, "+
		"topic_message %d, transaction %d: %d rows in %v (%.0f rows/s)",
		s.Entities, s.Topics, s.CustomFees, s.Schedules, s.TransactionSignatures, s.TopicMessages, s.Transactions,
		s.Rows(), s.Elapsed.Round(time.Millisecond), float64(s.Rows())/max(s.Elapsed.Seconds(), 1e-9))
}

// Tables are the tables Run writes to, in the order it writes them.
var Tables = []string{"entity", "topic", "custom_fee", "schedule", "transaction_signature", "topic_message", "transaction"}

// RunURL loads the data set through two connections to url: topic_message
// on one, every other table on the other, concurrently. Each connection
// commits its own transaction once both have finished copying.
func RunURL(ctx context.Context, url string, o Options) (Stats, error) {
	var conns []*pgx.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close(context.WithoutCancel(ctx))
		}
	}()
	for range 2 {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return Stats{}, fmt.Errorf("seed: connect: %w", err)
		}
		conns = append(conns, c)
	}
	return RunParallel(ctx, conns, o)
}

// Run writes the data set in one transaction, with one COPY per table. The
// tables must exist (db.Migrate) and hold none of the generated ids: Reset
// empties them.
func Run(ctx context.Context, conn *pgx.Conn, o Options) (Stats, error) {
	return RunParallel(ctx, []*pgx.Conn{conn}, o)
}

// RunParallel is Run over one or more connections: with two or more, the
// topic_message COPY runs on the second connection while the first copies
// everything else, each in a transaction of its own, committed only when
// both copies have succeeded.
func RunParallel(ctx context.Context, conns []*pgx.Conn, o Options) (Stats, error) {
	start := time.Now()
	var st Stats
	if len(conns) == 0 {
		return st, errors.New("seed: no connection")
	}
	if err := o.validate(); err != nil {
		return st, err
	}
	if err := registerTypes(ctx, conns[0]); err != nil {
		return st, err
	}

	g := newGen(o.Seed)
	all := []copyJob{
		{"entity", entityColumns, g.entities(&o), &st.Entities},
		{"topic", topicColumns, g.topics(&o), &st.Topics},
		{"custom_fee", customFeeColumns, g.customFees(&o), &st.CustomFees},
		{"schedule", scheduleColumns, g.schedules(&o), &st.Schedules},
		{"transaction_signature", signatureColumns, g.signatures(&o), &st.TransactionSignatures},
		{"topic_message", messageColumns, newMessageSource(&o), &st.TopicMessages},
		{"transaction", transactionColumns, newTransactionSource(&o), &st.Transactions},
	}
	var plan [][]copyJob
	if len(conns) == 1 {
		plan = [][]copyJob{all}
	} else {
		conns = conns[:2]
		plan = [][]copyJob{append(all[:5:5], all[6]), {all[5]}}
	}

	txs := make([]pgx.Tx, len(conns))
	for i, c := range conns {
		tx, err := c.Begin(ctx)
		if err != nil {
			return st, fmt.Errorf("seed: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		// Losing the last commits in a crash costs nothing here; waiting
		// for the WAL flush of a large load costs seconds.
		if _, err := tx.Exec(ctx, "set local synchronous_commit = off"); err != nil {
			return st, fmt.Errorf("seed: %w", err)
		}
		txs[i] = tx
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(txs))
	for i, tx := range txs {
		go func() {
			for _, c := range plan[i] {
				n, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, c.src)
				if err != nil {
					cancel() // stop the other copy
					errs <- fmt.Errorf("seed: copy %s: %w", c.table, err)
					return
				}
				*c.n = n
			}
			errs <- nil
		}()
	}
	var err error
	for range txs {
		// Report the failure rather than the other copy's cancellation.
		if e := <-errs; e != nil && (err == nil || errors.Is(err, context.Canceled)) {
			err = e
		}
	}
	if err != nil {
		return st, err
	}
	for _, tx := range txs {
		if err := tx.Commit(ctx); err != nil {
			return st, fmt.Errorf("seed: commit: %w", err)
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

type copyJob struct {
	table string
	cols  []string
	src   pgx.CopyFromSource
	n     *int64
}

// Reset deletes every row of the tables Run writes to. Only for databases
// that hold nothing but seeded data.
func Reset(ctx context.Context, conn *pgx.Conn) error {
	q := "truncate table"
	for i, t := range Tables {
		if i > 0 {
			q += ","
		}
		q += " " + pgx.Identifier{t}.Sanitize()
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("seed: reset: %w", err)
	}
	return nil
}

// registerTypes teaches the connection the entity_type enum, which COPY's
// binary format needs to know.
func registerTypes(ctx context.Context, conn *pgx.Conn) error {
	if _, ok := conn.TypeMap().TypeForName("entity_type"); ok {
		return nil
	}
	t, err := conn.LoadType(ctx, "entity_type")
	if err != nil {
		return fmt.Errorf("seed: load type entity_type: %w", err)
	}
	conn.TypeMap().RegisterType(t)
	return nil
}
