package rest

import (
	"fmt"
	"strings"

	"mirrorql/app"
	"mirrorql/model"
)

// Rules for single query values (docs/reference/behavior.md §1.5). Each returns ok=false for
// a value the mirror node reports as `Invalid parameter: <name>`.

// parseLong accepts `^\d{1,19}$` within int64 and at least min.
func parseLong(s string, min int64) (int64, bool) { return model.ParseLong(s, min) }

// parseSequenceNumber: docs/reference/DECISIONS.md #1 makes 0 valid (the contract's minimum).
func parseSequenceNumber(s string) (int64, bool) { return model.ParseSequenceNumber(s) }

// parseLimit is a decimal page size under app.PageSizes' rule.
func parseLimit(s string, sizes app.PageSizes) (int, bool) {
	v, ok := parseLong(s, 0)
	if !ok {
		return 0, false
	}
	return sizes.Size(v)
}

func parseOrder(s string) (model.Order, bool) {
	switch strings.ToLower(s) {
	case "asc":
		return model.Asc, true
	case "desc":
		return model.Desc, true
	}
	return "", false
}

// parseEncoding reports whether the value asks for UTF-8 (docs/reference/DECISIONS.md #4: only
// without an operator or with eq).
func parseEncoding(op model.Operator, s string) (utf8 bool, ok bool) {
	switch strings.ToLower(s) {
	case "base64":
		return false, op == model.OpEq
	case "utf-8", "utf8":
		return true, op == model.OpEq
	}
	return false, false
}

// listParams is the common state of a list request's validation.
type listParams struct {
	problems app.Problems
	limit    int
	order    model.Order
}

func (p *listParams) err() error { return p.problems.Err() }

// each calls fn for every value of every accepted key in query order; fn
// reports whether the value is valid. As the mirror node's
// buildAndValidateFilters does, a key with more values than the repeat
// limit is reported first and no further, then the invalid values, then
// every value of a key not accepted (one message per value).
func (p *listParams) each(q *Query, accepted map[string]bool, fn func(key string, op model.Operator, value string) bool) {
	for _, key := range q.Keys {
		if n := len(q.Values[key]); n > maxRepeatedValues {
			p.problems.Message(fmt.Sprintf("Parameter values count exceeds maximum number allowed: %s count: %d max: %d", key, n, maxRepeatedValues))
		}
	}
	for _, key := range q.Keys {
		if !accepted[key] || len(q.Values[key]) > maxRepeatedValues {
			continue
		}
		for _, v := range q.Values[key] {
			op, value, ok := model.SplitOperator(v.Raw)
			if v.Object || !ok || !fn(key, op, value) {
				p.problems.Invalid(key)
			}
		}
	}
	for _, key := range q.Keys {
		if accepted[key] || len(q.Values[key]) > maxRepeatedValues {
			continue
		}
		for range q.Values[key] {
			p.problems.Unknown(key)
		}
	}
}

// common handles limit and order, whose operator is accepted and ignored and
// whose last value wins.
func (p *listParams) common(key, value string, sizes app.PageSizes) bool {
	switch key {
	case app.LimitParameter:
		v, ok := parseLimit(value, sizes)
		if ok {
			p.limit = v
		}
		return ok
	case "order":
		v, ok := parseOrder(value)
		if ok {
			p.order = v
		}
		return ok
	}
	return false
}

// rejectQuery is the single-item routes' check: they accept no parameter.
func rejectQuery(q *Query) error {
	if len(q.Keys) == 0 {
		return nil
	}
	// validateReq: one message per key, whatever its values
	var p app.Problems
	for _, key := range q.Keys {
		p.Unknown(key)
	}
	return p.Err()
}
