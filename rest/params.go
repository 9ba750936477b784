package rest

import (
	"errors"
	"strings"

	"mirrorql/model"
)

// Rules for single query values (behavior.md §1.5). Each returns ok=false for
// a value the mirror node reports as `Invalid parameter: <name>`.

// parseLong accepts `^\d{1,19}$` within int64 and at least min.
func parseLong(s string, min int64) (int64, bool) { return model.ParseLong(s, min) }

// parseSequenceNumber: DECISIONS #1 makes 0 valid (the contract's minimum).
func parseSequenceNumber(s string) (int64, bool) { return model.ParseSequenceNumber(s) }

// parseLimit: 1..2^63-1, capped at the configured maximum.
func parseLimit(s string, max int) (int, bool) {
	v, ok := parseLong(s, 1)
	if !ok {
		return 0, false
	}
	if v > int64(max) {
		return max, true
	}
	return int(v), true
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

// parseEncoding reports whether the value asks for UTF-8 (DECISIONS #4: only
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

// listParams is the common state of a list request's validation: invalid
// messages in query order, then unknown ones (behavior.md §1.4).
type listParams struct {
	invalid []string
	unknown []string
	limit   int
	order   model.Order
}

func (p *listParams) err() error {
	if len(p.invalid)+len(p.unknown) == 0 {
		return nil
	}
	return badRequest(append(p.invalid, p.unknown...)...)
}

// each calls fn for every value of every key in query order; fn reports
// whether the value is valid, and the key is unknown when accepted lacks it.
func (p *listParams) each(q *Query, accepted map[string]bool, fn func(key string, op model.Operator, value string) bool) {
	for _, key := range q.Keys {
		if !accepted[key] {
			p.unknown = append(p.unknown, unknownParameter(key))
			continue
		}
		for _, v := range q.Values[key] {
			op, value, ok := model.SplitOperator(v.Raw)
			if v.Object || !ok || !fn(key, op, value) {
				p.invalid = append(p.invalid, invalidParameter(key))
			}
		}
	}
}

// common handles limit and order, whose operator is accepted and ignored and
// whose last value wins.
func (p *listParams) common(key, value string, maxLimit int) bool {
	switch key {
	case "limit":
		v, ok := parseLimit(value, maxLimit)
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
	msgs := make([]string, len(q.Keys))
	for i, k := range q.Keys {
		msgs[i] = unknownParameter(k)
	}
	return badRequest(msgs...)
}

// entityIDError maps a parse failure to the mirror node's message: the
// parameter's name when the caller names one, else the rebuilt id.
func entityIDError(err error, paramName string) error {
	var inv *model.InvalidEntityIDError
	if paramName == "" && errors.As(err, &inv) {
		return badRequest(inv.Error())
	}
	return badRequest(invalidParameter(paramName))
}
