package db

import "sync/atomic"

// fallbackCounts count the reads on the v2 layout that could not rely on a
// topic's map (v2_topicmap.go) and read the parent table by bounds instead,
// by reason, and the catalogs read again because the database changed under
// them (v2State).
type fallbackCounts struct {
	n [whyStale + 1]atomic.Int64
}

func (f *fallbackCounts) add(reason why, n int64) {
	if reason != whyNone {
		f.n[reason].Add(n)
	}
}

// count is how many reads fell back for reason.
func (f *fallbackCounts) count(reason string) int64 {
	for w := whyTail; w <= whyStale; w++ {
		if w.String() == reason {
			return f.n[w].Load()
		}
	}
	return 0
}

// Fallbacks are the query layer's counts of reads that fell back, asked of
// the current reader at each count (none on v1). The service exports them
// as mirrorql_db_partition_fallbacks_total.
type Fallbacks struct{ d *DB }

// FallbackReasons are the reasons counted, in a fixed order.
var FallbackReasons = []string{whyHead.String(), whyGap.String(), whySpan.String(), whyTail.String(), whyEmpty.String(), whyStale.String()}

// Count is how many reads fell back for reason.
func (f Fallbacks) Count(reason string) int64 {
	return count(f.d.reader(), func(b bookkeeper) int64 { return b.fallbacks(reason) })
}

// Fallbacks are the query layer's counts of reads that fell back.
func (d *DB) Fallbacks() Fallbacks { return Fallbacks{d: d} }
