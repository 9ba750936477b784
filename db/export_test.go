package db

import (
	"context"
	"log/slog"
)

// ReadAsV1 has d read with the v1 statements whatever the layout: on a v2
// database they are slow but right, the reference the v2 reads are held to.
func ReadAsV1(d *DB) { d.current.Store(&readerOf{&v1Reader{d: d}}) }

// RelearnWith learns the layout again with another lookup mode, from a
// new catalog (LearnLayout keeps an unchanged one, and its topic maps).
func RelearnWith(ctx context.Context, d *DB, mode LookupMode) (Layout, error) {
	d.lookupMode = mode
	d.current.Store(nil) // a catalog read afresh, its topic maps learned anew
	return d.LearnLayout(ctx, slog.New(slog.DiscardHandler))
}

// PretendCitus has d read as it does on a Citus coordinator.
func PretendCitus(d *DB) {
	next := &v2Reader{d: d, l: d.Layout()}
	if p, ok := d.reader().(*v2Reader); ok {
		next.messages, next.transactions = p.messages, p.transactions
	}
	next.l.Citus = true
	d.current.Store(&readerOf{next})
}

// Catalog is the catalog the reads use now, to tell one from another.
func Catalog(d *DB) any { return d.reader() }
