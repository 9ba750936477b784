package v2

import "sync/atomic"

// fallbackCounts count the reads on the v2 layout that could not rely on a
// topic's map (topicmap.go) and read the parent table by bounds instead,
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

// FallbackReasons are the reasons counted, in a fixed order (db.FallbackReasons).
var FallbackReasons = []string{whyHead.String(), whyGap.String(), whySpan.String(), whyTail.String(), whyEmpty.String(), whyStale.String()}
