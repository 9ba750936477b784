package db

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"mirrorql/db/internal/driver"
)

// LookupMode says whether the service reads topic_message_lookup to find the
// partitions of a topic's messages (MIRRORQL_TOPIC_MESSAGE_LOOKUP).
type LookupMode string

const (
	// LookupAuto: on when topic_message is partitioned and the lookup holds
	// rows (the importer keeps it: persist.topicMessageLookups).
	LookupAuto LookupMode = "auto"
	LookupOn   LookupMode = "on"
	LookupOff  LookupMode = "off"
)

// ParseLookupMode reads a MIRRORQL_TOPIC_MESSAGE_LOOKUP value.
func ParseLookupMode(s string) (LookupMode, error) {
	switch m := LookupMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", LookupAuto:
		return LookupAuto, nil
	case LookupOn, LookupOff:
		return m, nil
	}
	return "", fmt.Errorf("must be auto, on or off, got %q", s)
}

// Layout is what the service found out about the database it reads
// (driver.Layout: the readers choose their statements by it).
type Layout = driver.Layout

// detectLayoutSQL reads the layout in one statement from the catalogs (and
// one row of the lookup). to_regclass keeps it from failing on a database
// that lacks a table: the service then reports the missing table elsewhere.
const detectLayoutSQL = "SELECT " +
	"coalesce((SELECT c.relkind = 'p' FROM pg_class AS c WHERE c.oid = to_regclass('topic_message')), false), " +
	"coalesce((SELECT c.relkind = 'p' FROM pg_class AS c WHERE c.oid = to_regclass('transaction')), false), " +
	"to_regclass('topic_message_lookup') IS NOT NULL, " +
	"coalesce((SELECT bool_or(i.indisunique) FROM pg_index AS i WHERE i.indrelid = to_regclass('topic_message') " +
	"AND i.indnatts = 2 AND pg_get_indexdef(i.indexrelid) LIKE '%(topic_id, sequence_number)%'), false), " +
	"EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')"

const lookupRowsSQL = "SELECT EXISTS (SELECT 1 FROM topic_message_lookup)"

// detectLayout finds out the database's layout; mode decides UseLookup.
func (d *DB) detectLayout(ctx context.Context, mode LookupMode) (Layout, error) {
	var l Layout
	var lookupTable bool
	read := func(rows driver.RowSource) error {
		return driver.ScanOne(rows, &l.MessagesPartitioned, &l.TransactionsPartitioned, &lookupTable, &l.SequenceUnique, &l.Citus)
	}
	if err := d.query(ctx, read, detectLayoutSQL); err != nil {
		return Layout{}, fmt.Errorf("layout: %w", err)
	}
	if lookupTable {
		read := func(rows driver.RowSource) error { return driver.ScanOne(rows, &l.LookupRows) }
		if err := d.query(ctx, read, lookupRowsSQL); err != nil {
			return Layout{}, fmt.Errorf("layout: %w", err)
		}
	}
	switch mode {
	case LookupOn:
		l.UseLookup = l.MessagesPartitioned && lookupTable
	case LookupOff:
	default:
		l.UseLookup = l.MessagesPartitioned && l.LookupRows
	}
	return l, nil
}

// Layout is the layout found by the last LearnLayout (v1 until then).
func (d *DB) Layout() Layout {
	if r := d.current.Load(); r != nil {
		return r.Layout
	}
	return Layout{}
}

// LearnLayout finds out the database's layout and, on v2, its partitions,
// and has every statement from then on read accordingly: the reader of the
// layout known before says which reader follows it (reader.go). The service
// calls it at start and whenever the database answers again after an
// outage; it logs the layout when it differs from the one known before.
func (d *DB) LearnLayout(ctx context.Context, log *slog.Logger) (Layout, error) {
	l, err := d.detectLayout(ctx, d.lookupMode)
	if err != nil {
		return Layout{}, err
	}
	cur := d.current.Load()
	next, err := d.reader().Next(ctx, l)
	if err != nil {
		return Layout{}, err
	}
	if cur != nil && next == cur.Reader {
		// Nothing changed: keep the catalog read before, and with it the
		// topic maps learned since (a new catalog starts them afresh, and
		// every topic would be learned again each refresh).
		return l, nil
	}
	prev := d.current.Swap(&driver.Current{Reader: next, Layout: l})
	if prev == nil || prev.Layout != l {
		if log == nil {
			log = slog.Default()
		}
		log.Info("database layout", "layout", l.Name(), "topic_message_partitioned", l.MessagesPartitioned,
			"transaction_partitioned", l.TransactionsPartitioned, "lookup_rows", l.LookupRows,
			"sequence_unique", l.SequenceUnique, "citus", l.Citus, "use_lookup", l.UseLookup,
			"topic_message_partitions", count(next, driver.Bookkeeper.Partitions))
	}
	return l, nil
}

// KeepLayout learns the layout until ctx ends: every second until the
// database first answers, then every interval, so that a new month's
// partition, a detached one or a database replaced behind the service (a
// reconnect) is picked up.
func (d *DB) KeepLayout(ctx context.Context, interval time.Duration, log *slog.Logger) {
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := d.LearnLayout(lctx, log)
		cancel()
		if err != nil && d.current.Load() == nil {
			wait = time.Second
			continue
		}
		wait = interval
	}
}
