package db

import (
	"context"
	"log/slog"

	"mirrorql/db/internal/driver"
	v1 "mirrorql/db/internal/v1"
)

// ReadAsV1 has d read with the v1 statements whatever the layout: on a v2
// database they are slow but right, the reference the v2 reads are held to.
func ReadAsV1(d *DB) { d.current.Store(&driver.Current{Reader: v1.New(&d.env, Layout{})}) }

// RelearnWith learns the layout again with another lookup mode, from a
// new catalog (LearnLayout keeps an unchanged one, and its topic maps).
func RelearnWith(ctx context.Context, d *DB, mode LookupMode) (Layout, error) {
	d.lookupMode = mode
	d.current.Store(nil) // a catalog read afresh, its topic maps learned anew
	return d.LearnLayout(ctx, slog.New(slog.DiscardHandler))
}

// Catalog is the catalog the reads use now, to tell one from another.
func Catalog(d *DB) any { return d.reader() }
