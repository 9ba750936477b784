package model

import (
	"errors"
	"math"
	"strconv"
)

// Timestamp is nanoseconds since the Unix epoch, as every *_timestamp column stores it.
type Timestamp int64

// ErrInvalidTimestamp covers both a malformed value and one whose nanoseconds
// do not fit int64 (docs/reference/DECISIONS.md #5: 400 instead of the mirror node's 503).
var ErrInvalidTimestamp = errors.New("invalid timestamp")

// ParseTimestamp accepts `^\d{1,10}$` or `^\d{1,10}\.\d{1,9}$` and right-pads
// the fraction to nanoseconds.
func ParseTimestamp(s string) (Timestamp, error) {
	dot := -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && dot < 0:
			dot = i
		case c < '0' || c > '9':
			return 0, ErrInvalidTimestamp
		}
	}
	secs, frac := s, ""
	if dot >= 0 {
		secs, frac = s[:dot], s[dot+1:]
		if len(frac) < 1 || len(frac) > 9 {
			return 0, ErrInvalidTimestamp
		}
	}
	if len(secs) < 1 || len(secs) > 10 {
		return 0, ErrInvalidTimestamp
	}
	sec, _ := strconv.ParseInt(secs, 10, 64)
	var nanos int64
	for i := 0; i < 9; i++ {
		nanos *= 10
		if i < len(frac) {
			nanos += int64(frac[i] - '0')
		}
	}
	if sec > (math.MaxInt64-nanos)/1_000_000_000 {
		return 0, ErrInvalidTimestamp
	}
	return Timestamp(sec*1_000_000_000 + nanos), nil
}

// String renders "seconds.nnnnnnnnn" (Node's form: 0 is "0.000000000").
func (t Timestamp) String() string { return string(t.Append(make([]byte, 0, 21))) }

// Append appends the Node form to b. The mirror node formats the decimal
// string (nsToSecNs): the seconds are all but the last nine characters ("0"
// when none are left), the nanoseconds the last nine, left-padded with '0'.
func (t Timestamp) Append(b []byte) []byte {
	v := int64(t)
	if v < 0 {
		// Not produced by the importer. Node cuts the string "-…" the same way,
		// so -5 is "0.0000000-5" and -999999999 is "-.999999999".
		var tmp [20]byte
		s := strconv.AppendInt(tmp[:0], v, 10)
		if len(s) <= 9 {
			b = append(b, "0.00000000"[:11-len(s)]...)
			return append(b, s...)
		}
		b = append(b, s[:len(s)-9]...)
		b = append(b, '.')
		return append(b, s[len(s)-9:]...)
	}
	b = strconv.AppendInt(b, v/1_000_000_000, 10)
	b = append(b, '.')
	n := v % 1_000_000_000
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, digits[:]...)
}

// StringPtr is the nullable string form of an optional timestamp: nil for
// nil, else a pointer to String.
func (t *Timestamp) StringPtr() *string {
	if t == nil {
		return nil
	}
	s := t.String()
	return &s
}

// JavaString is rest-java's rendering, used by the topic details route only:
// identical to String except that 0 is "0.0" (docs/reference/behavior.md §5.3).
func (t Timestamp) JavaString() string {
	if t == 0 {
		return "0.0"
	}
	return t.String()
}
