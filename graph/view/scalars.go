// Package view holds the GraphQL face's object types: thin views over the
// model values that format every field with model's rules (the same
// functions REST calls), and the input scalars, which keep the client's text
// so that the resolver that knows REST's name for the argument can validate
// it and report REST's message.
package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
)

// EntityIDArg is an EntityId argument as the client wrote it.
type EntityIDArg string

// TimestampArg is a Timestamp argument as the client wrote it.
type TimestampArg string

// LongArg is a Long argument as the client wrote it (a number is kept as its
// decimal text).
type LongArg string

// ArgText turns any input value into text, as the input scalars' UnmarshalGQL
// do. Nothing is rejected here: a value of the wrong shape becomes text that
// the REST rule then refuses with REST's message for the argument.
func ArgText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

func (a *EntityIDArg) UnmarshalGQL(v any) error  { *a = EntityIDArg(ArgText(v)); return nil }
func (a EntityIDArg) MarshalGQL(w io.Writer)     { graphql.MarshalString(string(a)).MarshalGQL(w) }
func (a *TimestampArg) UnmarshalGQL(v any) error { *a = TimestampArg(ArgText(v)); return nil }
func (a TimestampArg) MarshalGQL(w io.Writer)    { graphql.MarshalString(string(a)).MarshalGQL(w) }
func (a *LongArg) UnmarshalGQL(v any) error      { *a = LongArg(ArgText(v)); return nil }

// MarshalGQL writes a number when the text is one, else a string.
func (a LongArg) MarshalGQL(w io.Writer) {
	if n, err := strconv.ParseInt(string(a), 10, 64); err == nil {
		graphql.MarshalInt64(n).MarshalGQL(w)
		return
	}
	graphql.MarshalString(string(a)).MarshalGQL(w)
}
