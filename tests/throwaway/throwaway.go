// Package throwaway starts a PostgreSQL cluster of one test's own, for the
// tests that change what the shared servers must keep as they are: who may
// log in and how (roles with passwords, pg_hba.conf), TLS, server settings.
package throwaway

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"mirrorql/tests/prereq"
	"mirrorql/tools/pgcluster"
)

// Cluster starts a cluster with o, stopped when t ends, and connects to it
// as its superuser (the connection closed when t ends, before the cluster
// stops). A machine without PostgreSQL's server binaries is a missing
// prerequisite: a skip, or under CI=true a failure.
func Cluster(t testing.TB, o pgcluster.Options) (*pgcluster.Cluster, *pgx.Conn) {
	t.Helper()
	if _, err := pgcluster.FindBinaries(); errors.Is(err, pgcluster.ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	ctx := context.Background()
	c, err := pgcluster.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	conn, err := pgx.Connect(ctx, c.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return c, conn
}
