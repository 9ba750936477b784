package db

import (
	"context"
	"fmt"

	"mirrorql/db/internal/driver"
)

const schedulesVersionSQL = "SELECT coalesce(string_agg(relfilenode::text, '.' ORDER BY relname), '') FROM pg_class " +
	"WHERE oid IN (to_regclass('schedule'), to_regclass('entity'), to_regclass('transaction_signature'))"

// SchedulesVersion names the storage of the tables the schedules list reads:
// their relfilenodes, which change when a table is truncated or rewritten and
// never on inserts or updates. The schedules response cache keys its entries
// by it, so an importer's steady writes leave the cache its full lifetime
// (the list may lag, as documented), while a reload of the tables (TRUNCATE,
// as the conformance runner and restores do) is never answered with the rows
// of before. One catalog lookup on pg_class's primary key.
func (d *DB) SchedulesVersion(ctx context.Context) (string, error) {
	var v string
	read := func(rows driver.RowSource) error { return driver.ScanOne(rows, &v) }
	if err := d.query(ctx, read, schedulesVersionSQL); err != nil {
		return "", fmt.Errorf("schedules version: %w", err)
	}
	return v, nil
}
