package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/graph/view"
	"mirrorql/tests/testdb"
)

// TestPostJSONAnswersAsGqlgen: postJSON answers every kind of request —
// found, not found, field errors, invalid operations, undecodable bodies,
// introspection — with the status, media type and JSON gqlgen's own POST
// transport gives, for each kind of Accept header.
func TestPostJSONAnswersAsGqlgen(t *testing.T) {
	t.Parallel()
	d, o := fixtureDB(t)
	ours, theirs := newAPI(app.New(d, app.Rules{}), o, false, nil), newAPI(app.New(d, app.Rules{}), o, false, transport.POST{})

	bodies := map[string]string{
		"found":             `{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { topicId sequenceNumber consensusTimestamp message runningHash topic { id memo } } }","variables":{"t":"0.0.7","s":1}}`,
		"not found":         `{"query":"{ topicMessage(topicId: \"7\", sequenceNumber: 999) { sequenceNumber } }"}`,
		"bad argument":      `{"query":"{ topicMessage(topicId: \"x.y\", sequenceNumber: 1) { sequenceNumber } }"}`,
		"page":              `{"query":"{ topic(id: \"7\") { messages(first: 3) { nodes { sequenceNumber chunkInfo { number total } } pageInfo { hasNextPage endCursor } } } }"}`,
		"unknown field":     `{"query":"{ topicMessage(topicId: \"7\", sequenceNumber: 1) { nope } }"}`,
		"syntax":            `{"query":"{ topicMessage("}`,
		"bad variable":      `{"query":"query($s: Long!) { topicMessage(topicId: \"7\", sequenceNumber: $s) { sequenceNumber } }","variables":{"s":"one"}}`,
		"operation name":    `{"query":"query A { topics { nodes { id } } } query B { schedules { nodes { scheduleId } } }","operationName":"B"}`,
		"missing operation": `{"query":"query A { topics { nodes { id } } } query B { topics { nodes { id } } }"}`,
		"not json":          `{"query": `,
		"not an object":     `[1, 2]`,
		"typename":          `{"query":"{ __typename }"}`,
		"introspection":     `{"query":"{ __type(name: \"Topic\") { name fields { name } } }"}`,
	}
	accepts := []string{"", "*/*", "application/json", "application/graphql-response+json",
		"application/graphql-response+json, application/json;q=0.9", "text/html", "application/*", "bad;;"}
	// Request errors (the document does not parse or validate) are answered
	// as the GraphQL-over-HTTP specification asks rather than as gqlgen does
	// (requesterrors.go): 200 to an application/json client, and with
	// application/graphql-response+json 400 and no `data` entry.
	requestErrors := map[string]bool{"unknown field": true, "syntax": true, // "bad variable" coerces: Long keeps its text
		"operation name": true, "missing operation": true}
	for name, body := range bodies {
		for _, accept := range accepts {
			got, want := post(t, ours, body, accept), post(t, theirs, body, accept)
			wantCode := want.Code
			var g, w any
			if err := json.Unmarshal(got.Body.Bytes(), &g); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, got.Body)
			}
			json.Unmarshal(want.Body.Bytes(), &w) //nolint:errcheck
			if requestErrors[name] {
				wantCode = http.StatusOK
				if responseType(accept) != "application/json" {
					wantCode = http.StatusBadRequest
					delete(w.(map[string]any), "data")
				}
			}
			if got.Code != wantCode || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("%s, Accept %q: %d %s, want %d %s", name, accept, got.Code, got.Header().Get("Content-Type"),
					wantCode, want.Header().Get("Content-Type"))
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s, Accept %q: body differs from gqlgen's (-gqlgen +ours):\n%s", name, accept, diff)
			}
			if !requestErrors[name] && got.Body.String() != want.Body.String() && !strings.ContainsAny(want.Body.String(), `\`) {
				t.Errorf("%s: bytes differ:\n%s\n%s", name, got.Body, want.Body)
			}
		}
	}
}

// fixtureDB is a new database holding testdata/fixture.sql, and the options
// of the tests' handlers.
func fixtureDB(tb testing.TB) (*db.DB, Options) {
	tb.Helper()
	return fixtureDBLayout(tb, testdb.Layout())
}

// fixtureDBLayout is fixtureDB on a database of the given layout.
func fixtureDBLayout(tb testing.TB, layout string) (*db.DB, Options) {
	tb.Helper()
	_, b := testdb.NewLayout(tb, layout)
	fixture, err := os.ReadFile("testdata/fixture.sql")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := b.DB.ExecContext(context.Background(), string(fixture)); err != nil {
		tb.Fatal(err)
	}
	return db.Wrap(b), Options{Now: func() time.Time { return time.Unix(1_300_000_000, 0) }}
}

func post(t testing.TB, h http.Handler, body, accept string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, Endpoint, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestResponseType(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]string{
		"":                                  "application/json",
		"*/*":                               "application/json",
		"application/*":                     "application/json",
		"application/json":                  "application/json",
		"application/graphql-response+json": "application/graphql-response+json",
		"text/html, application/graphql-response+json, application/json": "application/graphql-response+json",
		"text/html, application/json;q=0.5":                              "application/json",
		"text/html":                                                      "application/graphql-response+json",
		";;, */*":                                                        "application/json",
	} {
		if got := responseType(accept); got != want {
			t.Errorf("responseType(%q) = %s, want %s", accept, got, want)
		}
	}
}

// FuzzDecodeParams holds decodeParams to encoding/json, which gqlgen's own
// transport decodes with: what decodeParams accepts, encoding/json accepts
// and decodes to the same parameters (what it rejects goes to gqlgen's
// transport, so encoding/json has the last word there anyway).
func FuzzDecodeParams(f *testing.F) {
	f.Add([]byte(`{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { sequenceNumber } }","variables":{"t":"0.0.2001","s":123456}}`))
	f.Add([]byte(`{"query":"{a}","variables":{"x":[1,2.5,"\u00e9",null,true,{"y":1e400}]},"operationName":"A","extensions":{"k":1}}`))
	f.Add([]byte("{\"query\":\"\xff\xfe\",\"variables\":{\"a\":\"\xc3\"}} trailing"))
	f.Add([]byte(`{"Query":"{a}","QUERY":"{b}","query":null}`))
	f.Add([]byte(`{"query":"{a}","variables":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := decodeParams(body)
		if !ok {
			return
		}
		var want graphql.RawParams
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("decodeParams accepts what encoding/json rejects (%v): %q", err, body)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Fatalf("decodeParams(%q) differs from encoding/json (-want +got):\n%s", body, diff)
		}
	})
}

// BenchmarkDecodeParams compares decodeParams with the encoding/json
// decoding gqlgen's transport does, on the benchmark's topicMessage body.
func BenchmarkDecodeParams(b *testing.B) {
	body := []byte(`{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { ` +
		`consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion payerAccountId ` +
		`chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } } } }",` +
		`"variables":{"t":"0.0.2001","s":123456}}`)
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p graphql.RawParams
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if err := dec.Decode(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeParams", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeParams(body); !ok {
				b.Fatal("does not decode")
			}
		}
	})
	b.Run("decodePlanParams", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parser := planParsers.Get()
			if _, ok := decodePlanParams(parser, body); !ok {
				b.Fatal("does not decode")
			}
			planParsers.Put(parser)
		}
	})
}

// TestPlanParams: a plan's parameters are decodeParams', its variables'
// strings and numbers as decodeParams gives them, anything else none.
func TestPlanParams(t *testing.T) {
	t.Parallel()
	const q = `"query":"query($a: Long!) { a }"`
	for _, c := range []struct {
		name string
		body string
		ok   bool
		vars map[string]any // the variables read; nil: not a string or number
	}{
		{"string and number", `{` + q + `,"variables":{"t":"0.0.2001","s":123456}}`, true,
			map[string]any{"t": "0.0.2001", "s": json.Number("123456")}},
		{"escapes", `{` + q + `,"variables":{"t":"0.0.\u0032001\n"}}`, true, map[string]any{"t": "0.0.2001\n"}},
		{"number forms", `{` + q + `,"variables":{"a":-0,"b":1e400,"c":9223372036854775808}}`, true,
			map[string]any{"a": json.Number("-0"), "b": json.Number("1e400"), "c": json.Number("9223372036854775808")}},
		{"other kinds", `{` + q + `,"variables":{"a":null,"b":true,"c":{"d":1},"e":[1]}}`, true,
			map[string]any{"a": nil, "b": nil, "c": nil, "e": nil, "missing": nil}},
		{"spaces", "{ " + q + " , \"variables\" : { \"s\" : 12 } }", true, map[string]any{"s": json.Number("12")}},
		{"not an object", `[1]`, false, nil},
		{"variables not an object", `{` + q + `,"variables":[1]}`, false, nil},
		{"data after the object", `{` + q + `} {}`, false, nil},
		{"unterminated", `{` + q, false, nil},
		{"a name twice", `{` + q + `,"variables":{"a":1},"variables":{"b":2}}`, false, nil},
		{"a name of other case", `{` + q + `,"Variables":{"a":1}}`, false, nil},
		{"a member of another name", `{` + q + `,"other":1}`, false, nil},
		{"query not a string", `{"query":1}`, false, nil},
		{"a control character", "{\"query\":\"\x01\"}", false, nil},
		{"a bad escape", `{"query":"\q"}`, false, nil},
		{"a leading zero", `{` + q + `,"variables":{"a":01}}`, false, nil},
		{"a lone surrogate", `{"query":"\ud800"}`, false, nil},
		{"invalid UTF-8", "{\"query\":\"\xff\"}", false, nil},
		{"a variable twice", `{` + q + `,"variables":{"a":1,"a":"x"}}`, true, map[string]any{"a": "x"}},
		{"a variable's lone surrogate", `{` + q + `,"variables":{"a":"\udc00","b":"\ud800\u0041"}}`, true,
			map[string]any{"a": nil, "b": nil}},
		{"null members", `{` + q + `,"operationName":null,"variables":null,"extensions":null}`, true, map[string]any{"a": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parser := planParsers.Get()
			defer planParsers.Put(parser)
			got, ok := decodePlanParams(parser, []byte(c.body))
			if ok != c.ok {
				t.Fatalf("decodePlanParams(%s): ok %v, want %v", c.body, ok, c.ok)
			}
			if !ok {
				return
			}
			if got.Query != "query($a: Long!) { a }" {
				t.Errorf("query %q", got.Query)
			}
			for name, want := range c.vars {
				v, ok := got.variable(name)
				if ok != (want != nil) || (ok && v != view.ArgText(want)) {
					t.Errorf("variable %s: %#v, %v; want %#v", name, v, ok, want)
				}
			}
		})
	}
}

// FuzzPlanParams holds decodePlanParams to decodeParams: what it accepts,
// decodeParams accepts too, with the same query, operation name and
// extensions, and a variable it reads as a string or a number is
// decodeParams' value (a string that decodes to U+FFFD or the text \u it
// may leave to gqlgen); every other variable decodeParams gives is neither,
// and it reads none that decodeParams does not give.
func FuzzPlanParams(f *testing.F) {
	f.Add([]byte(`{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { sequenceNumber } }","variables":{"t":"0.0.2001","s":123456}}`))
	f.Add([]byte(`{"query":"{a}","variables":{"x":[1,2.5,"\u00e9",null,true,{"y":1e400}],"y":"\ud800","z":-1.5e-3},"operationName":"A","extensions":{"k":1}}`))
	f.Add([]byte("{\"query\":\"\xff\xfe\",\"variables\":{\"a\":\"\xc3\"}} trailing"))
	f.Add([]byte(`{"Query":"{a}","QUERY":"{b}","query":null,"variables":{"a":1,"a":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var parser fastjson.Parser
		got, ok := decodePlanParams(&parser, body)
		if !ok {
			return
		}
		want, ok := decodeParams(body)
		if !ok {
			t.Fatalf("decodePlanParams accepts what decodeParams rejects: %q", body)
		}
		if got.Query != want.Query || got.OperationName != want.OperationName || got.extensions != (len(want.Extensions) > 0) {
			t.Fatalf("decodePlanParams(%q) = %q %q %v, decodeParams %q %q %v", body,
				got.Query, got.OperationName, got.extensions, want.Query, want.OperationName, want.Extensions)
		}
		if got.variables != nil {
			got.variables.Visit(func(key []byte, _ *fastjson.Value) {
				if _, ok := want.Variables[string(key)]; !ok && utf8.Valid(key) {
					t.Fatalf("decodePlanParams(%q): variable %q, which decodeParams does not give", body, key)
				}
			})
		}
		for name, w := range want.Variables {
			v, ok := got.variable(name)
			switch w.(type) {
			case string:
				// A string whose decoding may differ is left to gqlgen.
				if !ok && (strings.ContainsRune(w.(string), utf8.RuneError) || strings.Contains(w.(string), `\u`)) {
					break
				}
				if !ok || v != w {
					t.Fatalf("decodePlanParams(%q): variable %s %#v, %v; decodeParams %#v", body, name, v, ok, w)
				}
			case json.Number:
				if !ok || v != string(w.(json.Number)) {
					t.Fatalf("decodePlanParams(%q): variable %s %#v, %v; decodeParams %#v", body, name, v, ok, w)
				}
			default:
				if ok {
					t.Fatalf("decodePlanParams(%q): variable %s %#v; decodeParams %#v", body, name, v, w)
				}
			}
		}
	})
}

// TestReadBody: a body limitRequest held is handed over as it is, not
// copied; any other body, or a held one already partly read, is read.
func TestReadBody(t *testing.T) {
	t.Parallel()
	held := []byte(`{"query":"{ __typename }"}`)
	r := httptest.NewRequest(http.MethodPost, Endpoint, nil)
	r.Body = &heldBody{Reader: *bytes.NewReader(held), b: held}
	if got, err := readBody(r); err != nil || &got[0] != &held[0] {
		t.Errorf("held body: %q, %v (a copy: %v)", got, err, err == nil && &got[0] != &held[0])
	}
	r.Body = &heldBody{Reader: *bytes.NewReader(held), b: held}
	_, _ = r.Body.Read(make([]byte, 2))
	if got, err := readBody(r); err != nil || string(got) != string(held[2:]) {
		t.Errorf("partly read held body: %q, %v", got, err)
	}
	r = httptest.NewRequest(http.MethodPost, Endpoint, strings.NewReader("plain"))
	if got, err := readBody(r); err != nil || string(got) != "plain" {
		t.Errorf("plain body: %q, %v", got, err)
	}
}

// TestReadLimited: a body is read whole, at most max bytes of it, whether its
// length is given (Content-Length) or not (chunked); a body that ends before
// its Content-Length is an error, not a short body.
func TestReadLimited(t *testing.T) {
	t.Parallel()
	const max = 8
	for _, c := range []struct {
		name    string
		body    string
		length  int64 // Content-Length; -1 unknown
		want    string
		tooLong bool
		fails   bool
	}{
		{"length given", "12345", 5, "12345", false, false},
		{"length given, at max", "12345678", 8, "12345678", false, false},
		{"length unknown", "12345", -1, "12345", false, false},
		{"length unknown, past max", "123456789", -1, "", true, false},
		{"shorter than its length", "123", 5, "", false, true},
		{"empty, length unknown", "", -1, "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, Endpoint, strings.NewReader(c.body))
			r.ContentLength = c.length
			got, err := readLimited(httptest.NewRecorder(), r, max)
			var mbe *http.MaxBytesError
			switch {
			case c.tooLong:
				if !errors.As(err, &mbe) {
					t.Fatalf("err %v, want a MaxBytesError", err)
				}
			case c.fails:
				if err == nil {
					t.Fatalf("no error; read %q", got)
				}
			case err != nil || string(got) != c.want:
				t.Fatalf("%q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestTakesPOST: the plans take what gqlgen's POST transport supports, and
// nothing else, whether or not the media type is written plainly.
func TestTakesPOST(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method, contentType, upgrade string
	}{
		{http.MethodPost, "application/json", ""},
		{http.MethodPost, "application/json; charset=utf-8", ""},
		{http.MethodPost, "Application/JSON", ""},
		{http.MethodPost, "application/json", "websocket"},
		{http.MethodPost, "application/graphql", ""},
		{http.MethodPost, "", ""},
		{http.MethodPost, "application/json;", ""},
		{http.MethodGet, "application/json", ""},
		{http.MethodPut, "application/json", ""},
	} {
		r := httptest.NewRequest(c.method, Endpoint, nil)
		if c.contentType != "" {
			r.Header.Set("Content-Type", c.contentType)
		}
		if c.upgrade != "" {
			r.Header.Set("Upgrade", c.upgrade)
		}
		if got, want := takesPOST(r), (transport.POST{}).Supports(r); got != want {
			t.Errorf("%s %q upgrade %q: takesPOST %v, gqlgen's POST %v", c.method, c.contentType, c.upgrade, got, want)
		}
	}
}

// TestDecodedString: the strings taken from fastjson are those it decodes
// as encoding/json does; the others are refused.
func TestDecodedString(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`"0.0.2001"`, `""`, `"a b"`, `"\u0041"`, `"a\"b"`, `"\n"`, `"é"`, `"\ud83d\ude00"`,
		`"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\xc3\"", `"\\u0041"`, `"\ufffd"`} {
		var p fastjson.Parser
		v, err := p.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got, ok := decodedString(v)
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if ok && string(got) != want {
			t.Errorf("decodedString(%s) = %q; encoding/json: %q", raw, got, want)
		}
	}
	for _, raw := range []string{`"0.0.2001"`, `""`, `"1700000000.000000001"`, `"query { a\n b }"`} {
		if _, ok := decodedString(fastjson.MustParse(raw)); !ok {
			t.Errorf("decodedString(%s) leaves it to gqlgen", raw)
		}
	}
}
