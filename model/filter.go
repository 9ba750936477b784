package model

import (
	"regexp"
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

// SQL is the comparison operator for the operator.
func (o Operator) SQL() string {
	switch o {
	case OpNe:
		return "!="
	case OpLt:
		return "<"
	case OpLte:
		return "<="
	case OpGt:
		return ">"
	case OpGte:
		return ">="
	}
	return "="
}

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
