package db

import (
	"sync"
	"sync/atomic"

	"mirrorql/model"
)

// SQL text made from model values. The query layer's statements are fixed
// texts; what varies is chosen among constants here (comparison) or travels
// as a bound value (exec.go).

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
