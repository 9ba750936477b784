package view

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"mirrorql/model"
)

// The output scalars. A field's value is a pointer into the row it shows
// (or to a constant) and marshals itself: gqlgen binds any type with
// MarshalGQL for a scalar, returns a pointer as its marshaler as it is, and
// keeps it as the field's result without boxing it, so a field costs no
// formatted string, no boxed value and no marshaling closure. The text is
// formatted straight into the executor's response buffer, by the same model
// functions (and gqlgen's string quoting) the string values used, so the
// bytes are those of graphql.MarshalString / MarshalInt*.

// Timestamp writes `"seconds.nanoseconds"`.
type Timestamp model.Timestamp

// EntityID writes `"shard.realm.num"`.
type EntityID model.EntityID

// Long writes a 64-bit integer.
type Long int64

// Int writes a 32-bit integer.
type Int int32

// Short writes a 16-bit integer (the running hash version).
type Short int16

// Bool writes true or false.
type Bool bool

// String writes a JSON string, escaped as gqlgen escapes strings.
type String string

// Base64 writes standard padded base64 in quotes.
type Base64 []byte

func (t *Timestamp) MarshalGQL(w io.Writer) {
	b := append(spare(w, 32), '"')
	write(w, append(model.Timestamp(*t).Append(b), '"'))
}

func (e *EntityID) MarshalGQL(w io.Writer) {
	b := append(spare(w, 64), '"')
	write(w, append(model.EntityID(*e).Append(b), '"'))
}

func (n *Long) MarshalGQL(w io.Writer)  { write(w, strconv.AppendInt(spare(w, 20), int64(*n), 10)) }
func (n *Int) MarshalGQL(w io.Writer)   { write(w, strconv.AppendInt(spare(w, 11), int64(*n), 10)) }
func (n *Short) MarshalGQL(w io.Writer) { write(w, strconv.AppendInt(spare(w, 6), int64(*n), 10)) }
func (v *Bool) MarshalGQL(w io.Writer)  { write(w, strconv.AppendBool(spare(w, 5), bool(*v))) }
func (s *String) MarshalGQL(w io.Writer) {
	graphql.MarshalString(string(*s)).MarshalGQL(w)
}

// MarshalGQL needs no escaping: the base64 alphabet has no character JSON
// escapes.
func (b *Base64) MarshalGQL(w io.Writer) {
	out := append(spare(w, base64.StdEncoding.EncodedLen(len(*b))+2), '"')
	write(w, append(base64.StdEncoding.AppendEncode(out, *b), '"'))
}

// PostgresBase64 writes base64 as PostgreSQL's encode() does
// (model.PostgresBase64: a line feed every 76 characters), as a JSON string.
type PostgresBase64 []byte

func (b *PostgresBase64) MarshalGQL(w io.Writer) {
	graphql.MarshalString(model.PostgresBase64(*b)).MarshalGQL(w)
}

// MarshalGQL writes the enum value's name.
func (t *KeyType) MarshalGQL(w io.Writer) { graphql.MarshalString(string(*t)).MarshalGQL(w) }

// Text is a message's bytes in the encoding the field was asked for (nil:
// the default, base64).
type Text struct {
	Bytes    []byte
	Encoding *MessageEncoding
}

// MarshalGQL writes base64, the default, straight into the response
// (MessageEncoding.Encode's base64 is the same standard padded encoding).
func (t *Text) MarshalGQL(w io.Writer) {
	if t.Encoding != nil && *t.Encoding != EncodingBase64 {
		graphql.MarshalString(t.Encoding.Encode(t.Bytes)).MarshalGQL(w)
		return
	}
	(*Base64)(&t.Bytes).MarshalGQL(w)
}

// spare is at least n bytes of free room at the end of w when it is a
// bytes.Buffer, as the executor's response is: the value is appended there
// and written in place, with no buffer of its own. The buffer grows as the
// write would have grown it.
func spare(w io.Writer, n int) []byte {
	if b, ok := w.(*bytes.Buffer); ok {
		b.Grow(n)
		return b.AvailableBuffer()
	}
	return nil
}

func write(w io.Writer, b []byte) { w.Write(b) } //nolint:errcheck // gqlgen's marshalers do not report write errors either

// gqlgen binds a type to a scalar only when it has both MarshalGQL and
// UnmarshalGQL; these types are only ever outputs (the input scalars are the
// *Arg types), so their UnmarshalGQL is never called.
var errOutputOnly = errors.New("an output value cannot be an argument")

func (*Timestamp) UnmarshalGQL(any) error      { return errOutputOnly }
func (*EntityID) UnmarshalGQL(any) error       { return errOutputOnly }
func (*Long) UnmarshalGQL(any) error           { return errOutputOnly }
func (*Int) UnmarshalGQL(any) error            { return errOutputOnly }
func (*Short) UnmarshalGQL(any) error          { return errOutputOnly }
func (*Bool) UnmarshalGQL(any) error           { return errOutputOnly }
func (*String) UnmarshalGQL(any) error         { return errOutputOnly }
func (*Base64) UnmarshalGQL(any) error         { return errOutputOnly }
func (*Text) UnmarshalGQL(any) error           { return errOutputOnly }
func (*PostgresBase64) UnmarshalGQL(any) error { return errOutputOnly }
func (*KeyType) UnmarshalGQL(any) error        { return errOutputOnly }

// Pointers to the optional columns: nil (null) when the column is NULL.

func timestampOf(t *model.Timestamp) *Timestamp { return (*Timestamp)(t) }
func longOf(n *int64) *Long                     { return (*Long)(n) }
func boolOf(v *bool) *Bool                      { return (*Bool)(v) }
func stringOf(s *string) *String                { return (*String)(s) }

// entityIDOf is REST's entityIDPtr: null for NULL and for num 0.
func entityIDOf(id *model.EntityID) *EntityID {
	if id == nil || id.IsNull() {
		return nil
	}
	return (*EntityID)(id)
}
