package db

import (
	"strconv"
	"sync"
	"sync/atomic"

	"mirrorql/model"
)

// SQL text and parameter values made from model values. The query layer's
// statements are fixed texts; what varies is chosen among constants here
// (comparison, direction) or travels as a bound value (int64Array).

// comparison is the SQL operator of a query operator.
func comparison(o model.Operator) string {
	switch o {
	case model.OpNe:
		return "!="
	case model.OpLt:
		return "<"
	case model.OpLte:
		return "<="
	case model.OpGt:
		return ">"
	case model.OpGte:
		return ">="
	}
	return "="
}

// direction is the SQL keyword of a sort order.
func direction(o model.Order) string {
	if o == model.Desc {
		return "DESC"
	}
	return "ASC"
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(alias, columns string) string {
	out := make([]byte, 0, len(columns)+32)
	out = append(out, alias...)
	for i := 0; i < len(columns); i++ {
		out = append(out, columns[i])
		if columns[i] == ' ' && i > 0 && columns[i-1] == ',' {
			out = append(out, alias...)
		}
	}
	return string(out)
}

// int64Array is vs as a PostgreSQL array literal ("{1,2}"): a text value
// bound to a bigint[] parameter, one the EXPLAIN tests can write as a
// literal.
func int64Array[T ~int64](vs []T) string {
	b := make([]byte, 0, 2+len(vs)*20)
	b = append(b, '{')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, '}'))
}

// notArray is the range's exclusion list as an int64Array.
func notArray(r model.Range) string { return int64Array(r.Not) }

// texts keeps the statement texts made for each key of one kind (a
// partition, a shape and direction, ...): made once, then the same string,
// which is also what pgx caches a connection's prepared statement under.
type texts[K comparable] struct{ m sync.Map }

// textsMade is how many texts all the caches hold: each may be a prepared
// statement on every connection of the pool (DB.KeptBytes).
var textsMade atomic.Int64

// of is the text kept for k, made by mk the first time it is asked for
// (or the text another caller kept first). mk does not escape: a closure
// passed here stays on the caller's stack.
func (c *texts[K]) of(k K, mk func() string) string {
	if s, ok := c.m.Load(k); ok {
		return s.(string)
	}
	got, loaded := c.m.LoadOrStore(k, mk())
	if !loaded {
		textsMade.Add(1)
	}
	return got.(string)
}
