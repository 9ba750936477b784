package model

import "strconv"

// ParseLong is the mirror node's long rule for query and path values
// (docs/reference/behavior.md §1.5): `^\d{1,19}$`, within int64 and at least min.
func ParseLong(s string, min int64) (int64, bool) {
	if !isDigits(s, 19) { // `^\d{1,19}$`, without a regexp: this runs on every request
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < min {
		return 0, false
	}
	return v, true
}

// ParseSequenceNumber is ParseLong with minimum 0: docs/reference/DECISIONS.md #1 makes 0 valid
// (the contract's minimum), unlike the mirror node's 1.
func ParseSequenceNumber(s string) (int64, bool) { return ParseLong(s, 0) }
