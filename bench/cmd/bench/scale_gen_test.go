package main

import (
	"testing"
	"time"
)

// The month streams of a plan, one after the other, are every message of
// every topic exactly once, in timestamp order, each topic's in sequence
// order, no two at the same instant, within the data's bounds; and message
// and ts agree with them.
func TestScalePlanStreams(t *testing.T) {
	now := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	for _, parts := range []int{10, 88} {
		spec := newScaleSpec("v2", 60_000, 300, parts, now)
		p, err := newScalePlan(spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.topics[0].n != 12_000 || p.cum[len(p.topics)] != spec.Messages {
			t.Fatalf("hot topic %d messages, %d in all", p.topics[0].n, p.cum[len(p.topics)])
		}
		next := make([]int64, len(p.topics)) // last sequence number seen per topic
		var n, last int64
		months := 0
		for m := spec.firstMonth(); m.UnixNano() < spec.DataTo; m = m.AddDate(0, 1, 0) {
			months++
			lo, hi := m.UnixNano(), min(m.AddDate(0, 1, 0).UnixNano(), spec.DataTo)
			s := newMonthStream(p, lo, hi)
			for s.next() {
				if s.ts < lo || s.ts >= hi || s.ts <= last {
					t.Fatalf("message %d of topic %d at %d: month [%d, %d), previous %d", s.s, s.topic, s.ts, lo, hi, last)
				}
				if s.s != next[s.topic]+1 {
					t.Fatalf("topic %d: sequence number %d after %d", s.topic, s.s, next[s.topic])
				}
				if got := p.ts(s.topic, s.s); got != s.ts {
					t.Fatalf("ts(%d, %d) = %d, streamed %d", s.topic, s.s, got, s.ts)
				}
				if i, seq := p.message(p.cum[s.topic] + s.s - 1); i != s.topic || seq != s.s {
					t.Fatalf("message(%d) = %d, %d", p.cum[s.topic]+s.s-1, i, seq)
				}
				next[s.topic], last = s.s, s.ts
				n++
			}
		}
		if months != parts-1 {
			t.Errorf("%d months of data, want %d (the last partition is next month's)", months, parts-1)
		}
		if n != spec.Messages {
			t.Fatalf("%d messages streamed, want %d", n, spec.Messages)
		}
		for i, tp := range p.topics {
			if next[i] != tp.n {
				t.Fatalf("topic %d: %d of %d messages", i, next[i], tp.n)
			}
		}
	}
}

// A set loaded on another day is kept: its marker's spec, dates and all.
func TestScaleMarker(t *testing.T) {
	then := newScaleSpec("v2", 2_000_000, 10_000, 88, time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC))
	now := newScaleSpec("v2", 2_000_000, 10_000, 88, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	spec, load, ok := parseScaleMarker(then.fingerprint() + "\n" + `{"Total":60000000000}`)
	if !ok || spec != then || load.Total != time.Minute {
		t.Fatalf("parsed %+v %+v %v", spec, load, ok)
	}
	if !spec.sameSet(now) {
		t.Error("a set of another day is not kept")
	}
	other := now
	other.Partitions = 10
	if spec.sameSet(other) {
		t.Error("a set of 88 partitions stands for one of 10")
	}
	if _, _, ok := parseScaleMarker("mirrorql bench scale: loading"); ok {
		t.Error("a load in progress is taken for a loaded set")
	}
}
