package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"mirrorql/db"
	"mirrorql/tests/testdb"
)

// TestReadOnly: with Options.ReadOnly every session of the pool is
// read-only, though its user may write (the test server's admin); without
// it, as before.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	url, _ := testdb.New(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		readOnly bool
		wantShow string
		wantCode string // SQLSTATE of the write; "" for success
	}{
		{"read-only", true, "on", "25006"}, // read_only_sql_transaction
		{"writable", false, "off", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := db.Open(db.Options{URL: url, ReadOnly: tc.readOnly, PoolSize: 2, ConnectTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			var show string
			if err := d.Bun().QueryRowContext(ctx, "show transaction_read_only").Scan(&show); err != nil {
				t.Fatal(err)
			}
			if show != tc.wantShow {
				t.Errorf("transaction_read_only = %s, want %s", show, tc.wantShow)
			}
			_, err = d.Bun().ExecContext(ctx, "create temporary table probe (x int)")
			var pgErr *pgconn.PgError
			switch {
			case tc.wantCode == "" && err != nil:
				t.Errorf("a write: %v", err)
			case tc.wantCode != "" && (!errors.As(err, &pgErr) || pgErr.Code != tc.wantCode):
				t.Errorf("a write: %v, want SQLSTATE %s", err, tc.wantCode)
			}
		})
	}
}
