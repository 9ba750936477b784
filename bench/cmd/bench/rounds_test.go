package main

import (
	"slices"
	"testing"
	"time"
)

func TestRatioTargetsJudgeTheMedianRound(t *testing.T) {
	rd := func(tps, seq, gql float64, p99 time.Duration) round {
		return round{floor: floor{tps: tps}, rows: []measurement{
			{route: route{name: "by-sequence"}, rps: seq, p99: p99},
			{route: route{name: "gql-message"}, rps: gql},
		}}
	}
	rounds := []round{
		rd(40_000, 16_000, 12_800, 6*time.Millisecond), // 0.40, gql 0.80
		rd(40_000, 22_000, 11_000, 4*time.Millisecond), // 0.55, gql 0.50
		rd(20_000, 10_400, 9_360, 5*time.Millisecond),  // 0.52, gql 0.90
	}
	byTitle := func(title string) ratioTarget {
		i := slices.IndexFunc(ratioTargets, func(t ratioTarget) bool { return t.title == title })
		return ratioTargets[i]
	}
	for _, tc := range []struct {
		title, median string
		met, ok       bool
	}{
		{"REST by sequence ≥ 0.5 × floor", "0.520", true, true},
		{"REST by sequence p99 ≤ 5 ms", "5.00 ms", true, true},
		{"GraphQL topicMessage ≥ 0.8 × REST by-sequence", "0.800", true, true},
		{"REST by timestamp ≥ 0.5 × floor", "", false, false}, // not measured
	} {
		median, each, met, ok := byTitle(tc.title).judge(rounds)
		if median != tc.median || met != tc.met || ok != tc.ok || (ok && len(each) != 3) {
			t.Errorf("%s: median %q met %v ok %v (each %v), want %q %v %v", tc.title, median, met, ok, each, tc.median, tc.met, tc.ok)
		}
	}
	// An even number of rounds takes the mean of the middle two.
	if median, _, met, _ := byTitle("REST by sequence ≥ 0.5 × floor").judge(rounds[:2]); median != "0.475" || met {
		t.Errorf("two rounds: median %s met %v, want 0.475 not met", median, met)
	}
}

// TestRoundOrder: every round runs every target route, each GraphQL route
// of a pair next to its REST twin, the two in the other order every other
// round.
func TestRoundOrder(t *testing.T) {
	for i := range 4 {
		names := roundOrder(i)
		if len(names) != len(targetRoutes) {
			t.Fatalf("round %d: %v", i, names)
		}
		for _, p := range routePairs {
			if !p.twin || p.gql == "gql-topic-page" { // the nested page is next to the list
				continue
			}
			g, r := slices.Index(names, p.gql), slices.Index(names, p.rest)
			if d := g - r; (i%2 == 0 && d != 1) || (i%2 == 1 && d != -1) {
				t.Errorf("round %d: %s at %d, %s at %d", i, p.rest, r, p.gql, g)
			}
		}
	}
	if !slices.Equal(roundOrder(0), targetRoutes) || !slices.Equal(roundOrder(2), targetRoutes) {
		t.Error("even rounds not in targetRoutes' order")
	}
}
