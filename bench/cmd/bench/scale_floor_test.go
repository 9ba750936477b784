package main

import (
	"math"
	"testing"
)

func TestCeilingOf(t *testing.T) {
	tests := []struct {
		name                  string
		cores, c1, tps1, tps2 float64
		want                  float64
		ok                    bool
	}{
		// a v1 request takes 1 ms; the floor adds 2/1000 − 2/2000 = 1 ms
		{"floor doubles the statement", 2, 0.001, 2000, 1000, 0.5, true},
		// 0.5 ms a request; the floor adds 2/8000 − 2/16000 = 0.125 ms
		{"small share of the request", 2, 0.0005, 16000, 8000, 0.8, true},
		{"v2's floor the faster", 2, 0.001, 1000, 2000, 1, true},
		{"same floor", 2, 0.001, 1000, 1000, 1, true},
		{"no CPU figure", 2, 0, 1000, 1000, 0, false},
		{"no floor", 2, 0.001, 0, 1000, 0, false},
		{"no v2 floor", 2, 0.001, 1000, 0, 0, false},
		{"no cores", 0, 0.001, 1000, 1000, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ceilingOf(tc.cores, tc.c1, tc.tps1, tc.tps2)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ceilingOf(%v, %v, %v, %v) = %v, %v; want %v, %v", tc.cores, tc.c1, tc.tps1, tc.tps2, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLayoutFloorRatio(t *testing.T) {
	lf := layoutFloor{
		v1: []floor{{tps: 1000}, {tps: 2000}, {tps: 1000}},
		v2: []floor{{tps: 500}, {tps: 500}, {tps: 900}},
	}
	// rounds: 0.5, 0.25, 0.9 → median 0.5
	if got := lf.ratio(); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("ratio = %v, want 0.5", got)
	}
	if got := (&layoutFloor{}).ratio(); got != 0 {
		t.Errorf("ratio without rounds = %v, want 0", got)
	}
}
