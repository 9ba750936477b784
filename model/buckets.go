package model

import "math/bits"

// MaxBuckets is the most intervals an activity histogram may have.
const MaxBuckets = 1000

// Boundaries splits [from, to) into n equal intervals and returns their n+1
// boundaries, from first and to last; boundary i is from + ⌊i·(to−from)/n⌋,
// so the intervals differ by at most a nanosecond and none is lost. The
// caller has checked from < to and 1 ≤ n ≤ MaxBuckets.
func Boundaries(from, to Timestamp, n int) []Timestamp {
	span := uint64(to) - uint64(from) // to > from: no overflow as unsigned
	out := make([]Timestamp, n+1)
	for i := 0; i <= n; i++ {
		// i·span can exceed 64 bits; its high word is below n, as i ≤ n.
		hi, lo := bits.Mul64(uint64(i), span)
		q, _ := bits.Div64(hi, lo, uint64(n))
		out[i] = Timestamp(uint64(from) + q)
	}
	return out
}
