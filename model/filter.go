package model

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// Operator is a comparison prefix of a query value (`gt:5`).
type Operator string

const (
	OpEq  Operator = "eq"
	OpNe  Operator = "ne"
	OpLt  Operator = "lt"
	OpLte Operator = "lte"
	OpGt  Operator = "gt"
	OpGte Operator = "gte"
)

var operatorPattern = regexp.MustCompile(`^(gte?|lte?|eq|ne)$`)

// SplitOperator splits `op:value` the way the mirror node does: the last
// piece is the value and the one before it the operator, so `gt:1:2` has
// operator "1" (invalid) and value "2". A value without ':' is eq.
func SplitOperator(raw string) (op Operator, value string, ok bool) {
	i := strings.LastIndexByte(raw, ':')
	if i < 0 {
		return OpEq, raw, true
	}
	value = raw[i+1:]
	opText := raw[:i]
	if j := strings.LastIndexByte(opText, ':'); j >= 0 {
		opText = opText[j+1:]
	}
	if !operatorPattern.MatchString(opText) {
		return "", value, false
	}
	return Operator(opText), value, true
}

// Order is the sort direction of a list.
type Order string

const (
	Asc  Order = "asc"
	Desc Order = "desc"
)

// Condition is one `column op value` term; list filters AND them in the
// order the client gave them.
type Condition[T any] struct {
	Op    Operator
	Value T
}

// AllHold reports whether v meets every condition of conds (they are
// ANDed): what a list filter means, which RangeOf must keep.
func AllHold[T ~int64](v T, conds []Condition[T]) bool {
	for _, c := range conds {
		var ok bool
		switch c.Op {
		case OpEq:
			ok = v == c.Value
		case OpNe:
			ok = v != c.Value
		case OpLt:
			ok = v < c.Value
		case OpLte:
			ok = v <= c.Value
		case OpGt:
			ok = v > c.Value
		case OpGte:
			ok = v >= c.Value
		}
		if !ok {
			return false
		}
	}
	return true
}

// Range is the set of values that a list of ANDed conditions admits:
// Lo ≤ v ≤ Hi and v not in Not. Reducing any mix of conditions to this one
// shape lets the query layer send one fixed statement per order, which the
// server prepares once per connection, instead of one text per mix.
type Range struct {
	Lo, Hi int64
	Not    []int64
}

// Unbounded is the range that admits every value: no condition's.
func Unbounded() Range { return Range{Lo: math.MinInt64, Hi: math.MaxInt64} }

// Holds reports whether r admits v: what the conditions it was reduced
// from (RangeOf) say of v.
func (r Range) Holds(v int64) bool {
	return r.Lo <= v && v <= r.Hi && !slices.Contains(r.Not, v)
}

// RangeOf reduces ANDed conditions on an integer column to a Range; ok is
// false when no value can satisfy them all (lt the minimum, gt:5&lt:3, …).
func RangeOf[T ~int64](conds []Condition[T]) (r Range, ok bool) {
	r = Unbounded()
	for _, c := range conds {
		v := int64(c.Value)
		switch c.Op {
		case OpEq:
			r.Lo, r.Hi = max(r.Lo, v), min(r.Hi, v)
		case OpNe:
			r.Not = append(r.Not, v)
		case OpGt:
			if v == math.MaxInt64 {
				return r, false
			}
			r.Lo = max(r.Lo, v+1)
		case OpGte:
			r.Lo = max(r.Lo, v)
		case OpLt:
			if v == math.MinInt64 {
				return r, false
			}
			r.Hi = min(r.Hi, v-1)
		case OpLte:
			r.Hi = min(r.Hi, v)
		}
	}
	if r.Lo > r.Hi || r.Lo == r.Hi && slices.Contains(r.Not, r.Lo) {
		return r, false
	}
	return r, true
}
