package db

import (
	"mirrorql/db/internal/driver"
	v2 "mirrorql/db/internal/v2"
)

// Fallbacks are the query layer's counts of reads that fell back, asked of
// the current reader at each count (none on v1). The service exports them
// as mirrorql_db_partition_fallbacks_total.
type Fallbacks struct{ d *DB }

// FallbackReasons are the reasons counted, in a fixed order.
var FallbackReasons = v2.FallbackReasons

// Count is how many reads fell back for reason.
func (f Fallbacks) Count(reason string) int64 {
	return count(f.d.reader(), func(b driver.Bookkeeper) int64 { return b.Fallbacks(reason) })
}

// Fallbacks are the query layer's counts of reads that fell back.
func (d *DB) Fallbacks() Fallbacks { return Fallbacks{d: d} }
