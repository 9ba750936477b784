package pgcluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mirrorql/tests/prereq"
)

// SetAccess changes who gets in, in place: after it a password is asked
// over TCP, the cluster's own socket line still admits postgres, and a line
// the server cannot read is an error rather than rules left as they were.
func TestSetAccess(t *testing.T) {
	t.Parallel()
	if _, err := FindBinaries(); errors.Is(err, ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{Database: "access_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	conn, err := pgx.Connect(ctx, c.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "set password_encryption = 'scram-sha-256'; create role reader login password 'it''s me'")
	_ = conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetAccess(ctx, Access{
		HBA:      []string{"host all all 127.0.0.1/32 scram-sha-256"},
		Settings: map[string]string{"application_name": "set by SetAccess"},
	}); err != nil {
		t.Fatal(err)
	}
	_, err = pgx.Connect(ctx, c.AdminURL())
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
		t.Errorf("postgres without a password over TCP: %v, want 28P01 (password authentication failed)", err)
	}
	cfg, err := pgx.ParseConfig(strings.Replace(c.URL(), "postgres@", "reader@", 1))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = "it's me"
	conn, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("reader with its password: %v", err)
	}
	var app string
	err = conn.QueryRow(ctx, "show application_name").Scan(&app)
	_ = conn.Close(ctx)
	if err != nil || app != "set by SetAccess" {
		t.Errorf("application_name %q, %v: the setting did not reach new sessions", app, err)
	}
	if err := c.SetAccess(ctx, Access{HBA: []string{"host all all 127.0.0.1/32 no-such-method"}}); err == nil ||
		!strings.Contains(err.Error(), "refused its configuration") {
		t.Errorf("an unreadable line: %v", err)
	}
	if err := c.SetAccess(ctx, Access{Settings: map[string]string{"ssl; drop": "x"}}); err == nil {
		t.Error("a statement in a setting's name was taken")
	}
}
