package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// migrationFiles holds the schema: the subset of the mirror node v1 tables the
// API reads (docs/reference/schema.md), created only where absent.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Names of bun's bookkeeping tables. They are prefixed so that they cannot be
// mistaken for, or collide with, anything of the mirror node's.
const (
	migrationsTable     = "mirrorql_migrations"
	migrationLocksTable = "mirrorql_migration_locks"
)

// migrateLockKey is the pg_advisory_xact_lock key that serialises concurrent
// Migrate calls on one database (several replicas starting at once).
const migrateLockKey = 0x6d69_7272_6f72_716c // "mirrorql"

// Tables lists the mirror node tables the service reads, all of which the
// migrations create when they are absent.
var Tables = []string{
	"topic_message", "topic_message_lookup", "transaction", "entity",
	"topic", "custom_fee", "schedule", "transaction_signature",
}

// Migrations returns the embedded migrations, discovered from migrations/.
func Migrations() (*migrate.Migrations, error) {
	dir, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(dir); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return ms, nil
}

// Migrate brings the schema up to date. It is idempotent, and safe against a
// real mirror node database: every type, table and index is created only when
// absent, and an existing table is never altered. When the user may not create
// objects in the schema (a read-only mirror node login) and the bookkeeping
// table does not exist, Migrate only checks that the tables it needs are there.
func Migrate(ctx context.Context, b *bun.DB) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}

	// Hold an advisory lock for the whole run on a connection of its own, so
	// two processes migrating the same database do not race on CREATE. The
	// lock is transaction-scoped: rolling back releases it whatever happens.
	if b.Stats().MaxOpenConnections != 1 { // a one-connection pool would deadlock
		lock, err := b.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer func() { _ = lock.Rollback() }()
		if _, err := lock.ExecContext(ctx, "select pg_advisory_xact_lock(?)", int64(migrateLockKey)); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}

	var tracked, canCreate bool
	if err := b.QueryRowContext(ctx,
		"select to_regclass(?) is not null, coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)",
		migrationsTable,
	).Scan(&tracked, &canCreate); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	m := migrate.NewMigrator(b, ms,
		migrate.WithTableName(migrationsTable),
		migrate.WithLocksTableName(migrationLocksTable),
		// Record a migration only once it has run, so a failed one is retried.
		migrate.WithMarkAppliedOnSuccess(true),
	)
	if !canCreate {
		// A login that may not create anything (the mirror node's read-only
		// users): there is nothing we could do, so only check.
		if !tracked {
			return checkTables(ctx, b)
		}
		all, err := m.MigrationsWithStatus(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if pending := all.Unapplied(); len(pending) > 0 {
			return fmt.Errorf("migrate: %d migration(s) pending (%s), and this user may not create objects",
				len(pending), pending)
		}
		return nil
	}

	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: init: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// checkTables reports the tables of Tables that the search path does not reach.
func checkTables(ctx context.Context, b *bun.DB) error {
	var missing []string
	for _, t := range Tables {
		var found bool
		if err := b.QueryRowContext(ctx, "select to_regclass(?) is not null", t).Scan(&found); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if !found {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("migrate: schema incomplete: missing table(s) %s, and this user may not create them",
			strings.Join(missing, ", "))
	}
	return nil
}
