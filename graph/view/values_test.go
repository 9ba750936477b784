package view

import (
	"bytes"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"mirrorql/model"
)

// plainWriter is an io.Writer that is not a bytes.Buffer, so that the
// marshalers take their other path.
type plainWriter struct{ b bytes.Buffer }

func (p *plainWriter) Write(b []byte) (int, error) { return p.b.Write(b) }

// marshaled is what m writes into a fresh buffer, into a buffer that
// already holds text (its spare room then starts mid-buffer), and into a
// plain writer; all three must agree.
func marshaled(t testing.TB, m graphql.Marshaler) string {
	t.Helper()
	var fresh bytes.Buffer
	m.MarshalGQL(&fresh)
	var used bytes.Buffer
	used.WriteString(`{"x":`)
	m.MarshalGQL(&used)
	var plain plainWriter
	m.MarshalGQL(&plain)
	if got := used.String()[len(`{"x":`):]; got != fresh.String() || plain.b.String() != fresh.String() {
		t.Fatalf("fresh %q, after text %q, plain writer %q", fresh.String(), got, plain.b.String())
	}
	return fresh.String()
}

func gqlgenText(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

// TestValuesAsGqlgen: every output scalar writes the bytes gqlgen's own
// marshaler writes for the same value as a string or number.
func TestValuesAsGqlgen(t *testing.T) {
	ts := []model.Timestamp{0, 1, 999_999_999, 1_000_000_000, 1_700_000_000_123_456_789, math.MaxInt64, -5, -999_999_999, math.MinInt64}
	for _, v := range ts {
		if got, want := marshaled(t, (*Timestamp)(&v)), gqlgenText(graphql.MarshalString(v.String())); got != want {
			t.Errorf("Timestamp %d: %s, want %s", int64(v), got, want)
		}
	}
	ids := []model.EntityID{0, 1, 2001, model.EntityID(1)<<54 | model.EntityID(2)<<38 | 3, math.MaxInt64, -1}
	for _, v := range ids {
		if got, want := marshaled(t, (*EntityID)(&v)), gqlgenText(graphql.MarshalString(v.String())); got != want {
			t.Errorf("EntityID %d: %s, want %s", int64(v), got, want)
		}
	}
	for _, v := range []int64{0, 1, -1, 99, 100, math.MaxInt64, math.MinInt64} {
		if got, want := marshaled(t, (*Long)(&v)), gqlgenText(graphql.MarshalInt64(v)); got != want {
			t.Errorf("Long %d: %s, want %s", v, got, want)
		}
	}
	for _, v := range []int32{0, 7, -7, math.MaxInt32, math.MinInt32} {
		if got, want := marshaled(t, (*Int)(&v)), gqlgenText(graphql.MarshalInt32(v)); got != want {
			t.Errorf("Int %d: %s, want %s", v, got, want)
		}
	}
	for _, v := range []int16{0, 3, -1, math.MaxInt16, math.MinInt16} {
		if got, want := marshaled(t, (*Short)(&v)), gqlgenText(graphql.MarshalInt(int(v))); got != want {
			t.Errorf("Short %d: %s, want %s", v, got, want)
		}
	}
	for _, v := range []bool{false, true} {
		if got, want := marshaled(t, (*Bool)(&v)), gqlgenText(graphql.MarshalBoolean(v)); got != want {
			t.Errorf("Bool %v: %s, want %s", v, got, want)
		}
	}
	texts := []string{"", "memo", `quote " backslash \ slash /`, "tab\tnew line\n\x00\x1f\u2028", "caf\xc3\xa9", "bad \xff utf-8", "<&>"}
	for _, v := range texts {
		s := String(v)
		if got, want := marshaled(t, &s), gqlgenText(graphql.MarshalString(v)); got != want {
			t.Errorf("String %q: %s, want %s", v, got, want)
		}
		k := KeyType(v)
		if got, want := marshaled(t, &k), gqlgenText(graphql.MarshalString(v)); got != want {
			t.Errorf("KeyType %q: %s, want %s", v, got, want)
		}
		b := []byte(v)
		if got, want := marshaled(t, (*Base64)(&b)), gqlgenText(graphql.MarshalString(model.Base64(b))); got != want {
			t.Errorf("Base64 %q: %s, want %s", v, got, want)
		}
		if got, want := marshaled(t, (*PostgresBase64)(&b)), gqlgenText(graphql.MarshalString(model.PostgresBase64(b))); got != want {
			t.Errorf("PostgresBase64 %q: %s, want %s", v, got, want)
		}
		utf8 := EncodingUTF8
		for _, e := range []*MessageEncoding{nil, &utf8} {
			m := TopicMessage{Row: &model.TopicMessage{Message: b}}
			if got, want := marshaled(t, m.Message(e)), gqlgenText(graphql.MarshalString(e.Encode(b))); got != want {
				t.Errorf("message %q (encoding %v): %s, want %s", v, e, got, want)
			}
		}
	}
	long := bytes.Repeat([]byte{0xfb, 0xff}, 200) // PostgreSQL's base64 breaks lines
	if got, want := marshaled(t, (*PostgresBase64)(&long)), gqlgenText(graphql.MarshalString(model.PostgresBase64(long))); got != want {
		t.Errorf("long PostgresBase64: %s, want %s", got, want)
	}
}

// TestNullableValues: a NULL column, and REST's null entity ids (num 0), are
// nil pointers, which the generated code writes as null.
func TestNullableValues(t *testing.T) {
	zero, shardOnly := model.EntityID(0), model.EntityID(1)<<54
	one := model.EntityID(1)
	if entityIDOf(nil) != nil || entityIDOf(&zero) != nil || entityIDOf(&shardOnly) != nil || entityIDOf(&one) == nil {
		t.Error("entityIDOf")
	}
	if timestampOf(nil) != nil || longOf(nil) != nil || boolOf(nil) != nil || stringOf(nil) != nil {
		t.Error("a NULL column is not nil")
	}
	m := TopicMessage{Row: &model.TopicMessage{}}
	if got := marshaled(t, m.RunningHashVersion()); got != "3" {
		t.Errorf("running hash version without a column: %s", got)
	}
	if m.PayerAccountID() != nil {
		t.Error("payer without a column")
	}
}

// FuzzValuesAsGqlgen compares the numeric and text marshalers with
// gqlgen's for arbitrary values.
func FuzzValuesAsGqlgen(f *testing.F) {
	f.Add(int64(0), []byte(""))
	f.Add(int64(1_700_000_000_123_456_789), []byte("caf\xc3\xa9 \xff\n\""))
	f.Add(int64(-5), []byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, n int64, b []byte) {
		ts, id, long := model.Timestamp(n), model.EntityID(n), n
		checks := []struct {
			got  graphql.Marshaler
			want string
		}{
			{(*Timestamp)(&ts), ts.String()},
			{(*EntityID)(&id), id.String()},
			{(*Base64)(&b), model.Base64(b)},
			{(*PostgresBase64)(&b), model.PostgresBase64(b)},
		}
		for _, c := range checks {
			if got, want := marshaled(t, c.got), gqlgenText(graphql.MarshalString(c.want)); got != want {
				t.Fatalf("%T of %d / %q: %s, want %s", c.got, n, b, got, want)
			}
		}
		if got, want := marshaled(t, (*Long)(&long)), gqlgenText(graphql.MarshalInt64(n)); got != want {
			t.Fatalf("Long %d: %s, want %s", n, got, want)
		}
		s := String(b)
		if got, want := marshaled(t, &s), gqlgenText(graphql.MarshalString(string(b))); got != want {
			t.Fatalf("String %q: %s, want %s", b, got, want)
		}
	})
}
