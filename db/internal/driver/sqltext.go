package driver

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"mirrorql/model"
)

// SQL text made from model values. The query layer's statements are fixed
// texts; what varies is chosen among constants here (comparison) or travels
// as a bound value (db's exec.go; arrays as text literals: Int64Array).

// comparison is the SQL operator of a query operator.
func Comparison(o model.Operator) string {
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
func Prefixed(alias, columns string) string {
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
type Texts[K comparable] struct{ m sync.Map }

// TextsMade is how many texts all the caches hold: each may be a prepared
// statement on every connection of the pool (DB.KeptBytes).
var TextsMade atomic.Int64

// Of is the text kept for k, made by mk the first time it is asked for
// (or the text another caller kept first). mk does not escape: a closure
// passed here stays on the caller's stack.
func (c *Texts[K]) Of(k K, mk func() string) string {
	if s, ok := c.m.Load(k); ok {
		return s.(string)
	}
	got, loaded := c.m.LoadOrStore(k, mk())
	if !loaded {
		TextsMade.Add(1)
	}
	return got.(string)
}

// Direction is the SQL keyword of a sort order.
func Direction(o model.Order) string {
	if o == model.Desc {
		return "DESC"
	}
	return "ASC"
}

// Int64Array is vs as a PostgreSQL array literal ("{1,2}"): a text value
// bound to a bigint[] parameter, one the EXPLAIN tests can write as a
// literal.
func Int64Array[T ~int64](vs []T) string {
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

// NotArray is the range's exclusion list as an Int64Array.
func NotArray(r model.Range) string { return Int64Array(r.Not) }

// TextBytes is about what pgx keeps, on conns connections, of the
// statements made from the texts the caches hold (TextsMade): each may be
// prepared on every connection, up to pgx's statement cache capacity.
func TextBytes(conns int) int64 {
	return min(TextsMade.Load(), pgxStatementCache) * int64(conns) * preparedStatementBytes
}

const (
	// pgxStatementCache is pgx's default capacity of a connection's
	// cache of prepared statements (ConnConfig.StatementCacheCapacity).
	pgxStatementCache = 512
	// preparedStatementBytes is about what pgx keeps of one prepared
	// statement (its description: eleven columns, parameter types): 5 MiB
	// in a heap profile of the v2 service with some 270 texts on 16
	// connections.
	preparedStatementBytes = 1200
)

// SQLState is the SQLSTATE of an error the server sent.
func SQLState(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, true
	}
	return "", false
}
