package db

import "sync/atomic"

// Fallbacks counts the reads on the v2 layout that could not rely on a
// topic's map (v2_topicmap.go) and read the parent table by bounds instead, by
// reason, and the catalogs read again because the database changed under
// them. The service exports them as mirrorql_db_partition_fallbacks_total.
type Fallbacks struct {
	n [whyStale + 1]atomic.Int64
}

// FallbackReasons are the reasons counted, in a fixed order.
var FallbackReasons = []string{whyHead.String(), whyGap.String(), whySpan.String(), whyTail.String(), whyEmpty.String(), whyStale.String()}

func (f *Fallbacks) add(reason why, n int64) {
	if reason != whyNone {
		f.n[reason].Add(n)
	}
}

// Count is how many reads fell back for reason.
func (f *Fallbacks) Count(reason string) int64 {
	for w := whyTail; w <= whyStale; w++ {
		if w.String() == reason {
			return f.n[w].Load()
		}
	}
	return 0
}

// Fallbacks are the query layer's counts of reads that fell back.
func (d *DB) Fallbacks() *Fallbacks { return &d.counters }
