package db

import "sync/atomic"

// Fallbacks counts the reads on the v2 layout that could not rely on a
// topic's map (topicmap.go) and read the parent table by bounds instead, by
// reason, and the catalogs read again because the database changed under
// them. The service exports them as mirrorql_db_partition_fallbacks_total.
type Fallbacks struct {
	head, gap, span, tail, empty, stale atomic.Int64
}

// FallbackReasons are the reasons counted, in a fixed order.
var FallbackReasons = []string{whyHead, whyGap, whySpan, whyTail, whyEmpty, "stale"}

func (f *Fallbacks) counter(reason string) *atomic.Int64 {
	switch reason {
	case whyHead:
		return &f.head
	case whyGap:
		return &f.gap
	case whySpan:
		return &f.span
	case whyTail:
		return &f.tail
	case whyEmpty:
		return &f.empty
	case "stale":
		return &f.stale
	}
	return nil
}

func (f *Fallbacks) add(reason string, n int64) {
	if c := f.counter(reason); c != nil {
		c.Add(n)
	}
}

// Count is how many reads fell back for reason.
func (f *Fallbacks) Count(reason string) int64 {
	if c := f.counter(reason); c != nil {
		return c.Load()
	}
	return 0
}

// Fallbacks are the query layer's counts of reads that fell back.
func (d *DB) Fallbacks() *Fallbacks { return &d.counters }
