package model

import (
	"math"
	"testing"
)

func TestBoundaries(t *testing.T) {
	cases := []struct {
		from, to Timestamp
		n        int
		want     []Timestamp
	}{
		{0, 10, 1, []Timestamp{0, 10}},
		{0, 10, 2, []Timestamp{0, 5, 10}},
		{0, 10, 3, []Timestamp{0, 3, 6, 10}},
		{5, 8, 4, []Timestamp{5, 5, 6, 7, 8}},
		{-10, 10, 4, []Timestamp{-10, -5, 0, 5, 10}},
		{math.MinInt64, math.MaxInt64, 2, []Timestamp{math.MinInt64, -1, math.MaxInt64}},
		{0, math.MaxInt64, 1000, nil},
	}
	for _, tc := range cases {
		got := Boundaries(tc.from, tc.to, tc.n)
		if len(got) != tc.n+1 || got[0] != tc.from || got[tc.n] != tc.to {
			t.Errorf("Boundaries(%d, %d, %d) = %v", tc.from, tc.to, tc.n, got)
			continue
		}
		for i := 1; i < len(got); i++ {
			if got[i] < got[i-1] {
				t.Errorf("Boundaries(%d, %d, %d): not ascending at %d: %v", tc.from, tc.to, tc.n, i, got)
			}
		}
		if tc.want != nil {
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("Boundaries(%d, %d, %d) = %v, want %v", tc.from, tc.to, tc.n, got, tc.want)
					break
				}
			}
		}
	}
}

// FuzzBoundaries: n+1 ascending boundaries from from to to, intervals that
// differ by at most one nanosecond.
func FuzzBoundaries(f *testing.F) {
	f.Add(int64(0), int64(10), 3)
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), 1000)
	f.Fuzz(func(t *testing.T, from, to int64, n int) {
		if from >= to || n < 1 || n > MaxBuckets {
			return
		}
		got := Boundaries(Timestamp(from), Timestamp(to), n)
		if len(got) != n+1 || got[0] != Timestamp(from) || got[n] != Timestamp(to) {
			t.Fatalf("%d %d %d: %v", from, to, n, got)
		}
		var lo, hi uint64 = math.MaxUint64, 0
		for i := 1; i <= n; i++ {
			w := uint64(got[i]) - uint64(got[i-1])
			if got[i] < got[i-1] {
				t.Fatalf("%d %d %d: descending at %d", from, to, n, i)
			}
			lo, hi = min(lo, w), max(hi, w)
		}
		if hi-lo > 1 {
			t.Fatalf("%d %d %d: widths %d..%d", from, to, n, lo, hi)
		}
	})
}
