package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"mirrorql/app"
)

// planEnv answers requests twice over one database: with gqlgen's executor
// alone, and with compiled operations.
type planEnv struct {
	plain, compiled http.Handler
	plans           *plans
}

func newPlanEnv(tb testing.TB) *planEnv {
	d, o := fixtureDB(tb)
	compiled := newAPI(app.New(d, app.Rules{}), o, true, nil)
	return &planEnv{plain: newAPI(app.New(d, app.Rules{}), o, false, nil), compiled: compiled, plans: compiled.plans}
}

// check sends body to both handlers, twice to the compiled one (the first
// teaches it the operation), and fails on any difference of status, media
// type or bytes; it says whether the second answer came from a plan.
func (e *planEnv) check(tb testing.TB, name, body, accept string) (planned bool) {
	tb.Helper()
	want := post(tb, e.plain, body, accept)
	for i := range 2 {
		if i == 1 {
			planned = e.fromPlan(func(h http.Handler) { post(tb, h, body, accept) })
		}
		got := post(tb, e.compiled, body, accept)
		if got.Code != want.Code || !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) ||
			!sameAnswer(got.Body.Bytes(), want.Body.Bytes()) {
			tb.Fatalf("%s (answer %d, Accept %q):\ncompiled %d %s %s\ngqlgen   %d %s %s\nbody %s", name, i+1, accept,
				got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body, body)
		}
	}
	return planned
}

// fromPlan: did the plans answer what send sent, rather than pass it on to
// gqlgen?
func (e *planEnv) fromPlan(send func(http.Handler)) bool {
	passed := false
	send(limitRequest(1<<20, e.plans.before(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))))
	return !passed
}

// sameAnswer: the same bytes; for answers with errors, which gqlgen lists
// in the order its concurrent root fields finish (and which only gqlgen
// writes), the same JSON with the errors in any order.
func sameAnswer(got, want []byte) bool {
	if bytes.Equal(got, want) {
		return true
	}
	type answer struct {
		Errors []json.RawMessage `json:"errors"`
		Data   json.RawMessage   `json:"data"`
	}
	var g, w answer
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || len(w.Errors) == 0 ||
		!bytes.Equal(g.Data, w.Data) || len(g.Errors) != len(w.Errors) {
		return false
	}
	sorted := func(errs []json.RawMessage) []string {
		out := make([]string, len(errs))
		for i, e := range errs {
			out[i] = string(e)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(sorted(g.Errors), sorted(w.Errors))
}

func request(query string, vars map[string]any, extra ...string) string {
	m := map[string]any{"query": query}
	if vars != nil {
		m["variables"] = vars
	}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			panic(err)
		}
		m[extra[i]] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const (
	bySeq = `query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { ` + allMessageFields + ` } }`

	allMessageFields = `consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion payerAccountId ` +
		`chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }`
)

// TestPlansAnswerAsGqlgen: every request answers with gqlgen's bytes whether
// or not a plan serves it, and the plans serve the operations of their
// subset and no others.
func TestPlansAnswerAsGqlgen(t *testing.T) {
	t.Parallel()
	e := newPlanEnv(t)
	cases := []struct {
		name    string
		body    string
		planned bool
	}{
		{"unchunked", request(bySeq, map[string]any{"t": "0.0.7", "s": 1}), true},
		{"no running hash version", request(bySeq, map[string]any{"t": "0.0.7", "s": 2}), true},
		{"chunk 1 of 3", request(bySeq, map[string]any{"t": "0.0.7", "s": 3}), true},
		{"chunk 3 of 3", request(bySeq, map[string]any{"t": "7", "s": 5}), true},
		{"legacy chunk", request(bySeq, map[string]any{"t": "0.9", "s": 1}), true},
		{"legacy group, chunk missing", request(bySeq, map[string]any{"t": "0.0.9", "s": 2}), true},
		{"not found", request(bySeq, map[string]any{"t": "0.0.7", "s": 999}), true},
		{"no such topic", request(bySeq, map[string]any{"t": "0.0.8", "s": 1}), true},
		{"sequence number as a string", request(bySeq, map[string]any{"t": "0.0.7", "s": "4"}), true},
		{"extra variable", request(bySeq, map[string]any{"t": "0.0.7", "s": 1, "x": []int{1}}), true},
		{"operation name", request(`query Q($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { sequenceNumber } }`,
			map[string]any{"t": "7", "s": 1}, "operationName", `"Q"`), true},
		{"literals", request(`{ topicMessage(topicId: "0.0.7", sequenceNumber: 3) { `+allMessageFields+` } }`, nil), true},
		{"block string", request(`{ topicMessage(topicId: """7""", sequenceNumber: 3) { sequenceNumber } }`, nil), true},
		{"aliases and typenames", request(`{ __typename a: topicMessage(topicId: "7", sequenceNumber: 4) { __typename n: sequenceNumber `+
			`chunkInfo { __typename t: total initialTransactionId { __typename nonce v: transactionValidStart } } } }`, nil), true},
		{"two roots", request(`{ a: topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber } `+
			`b: topicMessageByTimestamp(consensusTimestamp: "1234567890.000000002") { sequenceNumber message(encoding: UTF8) } }`, nil), true},
		{"utf8", request(`{ topicMessage(topicId: "7", sequenceNumber: 2) { message(encoding: UTF8) } }`, nil), true},
		{"base64 given", request(`{ topicMessage(topicId: "7", sequenceNumber: 2) { message(encoding: BASE64) } }`, nil), true},
		{"encoding null", request(`{ topicMessage(topicId: "7", sequenceNumber: 2) { message(encoding: null) } }`, nil), true},
		{"by timestamp", request(`query($ts: Timestamp!) { topicMessageByTimestamp(consensusTimestamp: $ts) { `+allMessageFields+` } }`,
			map[string]any{"ts": "1234567890.000000002"}), true},
		{"by timestamp, failed transaction", request(`query($ts: Timestamp!) { topicMessageByTimestamp(consensusTimestamp: $ts) { sequenceNumber } }`,
			map[string]any{"ts": "1234567890.000000003"}), true},
		{"by timestamp, number", request(`query($ts: Timestamp!) { topicMessageByTimestamp(consensusTimestamp: $ts) { sequenceNumber } }`,
			map[string]any{"ts": 1234567890}), true},

		{"invalid topic", request(bySeq, map[string]any{"t": "x.y", "s": 1}), false},
		{"invalid topic and sequence number", request(bySeq, map[string]any{"t": "x.y", "s": -1}), false},
		{"sequence number 0", request(bySeq, map[string]any{"t": "7", "s": 0}), true},
		{"sequence number past int64", request(bySeq, map[string]any{"t": "7", "s": json.Number("9223372036854775808")}), false},
		{"fractional sequence number", request(bySeq, map[string]any{"t": "7", "s": 1.5}), false},
		{"entity id past the realm", request(bySeq, map[string]any{"t": "0.0.274877906944", "s": 1}), false},
		{"invalid timestamp", request(`query($ts: Timestamp!) { topicMessageByTimestamp(consensusTimestamp: $ts) { sequenceNumber } }`,
			map[string]any{"ts": "x"}), false},
		{"variable missing", request(bySeq, map[string]any{"t": "7"}), false},
		{"variable null", request(bySeq, map[string]any{"t": "7", "s": nil}), false},
		{"variable boolean", request(bySeq, map[string]any{"t": true, "s": 1}), false},
		{"variable object", request(bySeq, map[string]any{"t": map[string]any{"a": 1}, "s": 1}), false},
		{"variable list", request(bySeq, map[string]any{"t": "7", "s": []any{1}}), false},
		{"no variables", request(bySeq, nil), false},
		{"default value", request(`query($s: Long = 1) { topicMessage(topicId: "7", sequenceNumber: $s) { sequenceNumber } }`, nil), false},
		{"other operation name", request(`query Q { topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber } }`,
			nil, "operationName", `"R"`), false},
		{"two operations", request(`query Q { topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber } } query R { __typename }`,
			nil, "operationName", `"Q"`), false},
		{"extensions", request(bySeq, map[string]any{"t": "7", "s": 1}, "extensions", `{"x":1}`), false},
		{"field twice", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber sequenceNumber } }`, nil), false},
		{"root twice", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber } topicMessage(topicId: "7", sequenceNumber: 1) { message } }`, nil), false},
		{"fragment", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { ...F } } fragment F on TopicMessage { sequenceNumber }`, nil), false},
		{"inline fragment", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { ... on TopicMessage { sequenceNumber } } }`, nil), false},
		{"directive", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber @include(if: true) } }`, nil), false},
		{"skipped root", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) @skip(if: true) { sequenceNumber } }`, nil), false},
		{"topic", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber topic { id } } }`, nil), false},
		{"chunks", request(`{ topicMessage(topicId: "7", sequenceNumber: 3) { chunks { sequenceNumber } fullMessage } }`, nil), false},
		{"encoding variable", request(`query($e: MessageEncoding) { topicMessage(topicId: "7", sequenceNumber: 2) { message(encoding: $e) } }`,
			map[string]any{"e": "UTF8"}), false},
		{"other root", request(`{ topic(id: "7") { id } }`, nil), false},
		{"introspection", request(`{ __schema { queryType { name } } }`, nil), false},
		{"unknown field", request(`{ topicMessage(topicId: "7", sequenceNumber: 1) { nope } }`, nil), false},
	}
	for _, c := range cases {
		for _, accept := range []string{"", "application/graphql-response+json"} {
			if planned := e.check(t, c.name, c.body, accept); planned != c.planned {
				t.Errorf("%s: served from a plan %v, want %v", c.name, planned, c.planned)
			}
		}
	}
}

// TestPlansRandomOperations: random operations of the subset and around it,
// with random variables, answer as gqlgen answers them.
func TestPlansRandomOperations(t *testing.T) {
	t.Parallel()
	e := newPlanEnv(t)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	planned := 0
	for range n {
		query, vars := randomOperation(func() byte { return byte(r.UintN(256)) })
		if e.check(t, "random operation", request(query, vars), "") {
			planned++
		}
	}
	// The generator stays in the subset most of the time; a plan that served
	// little of it would make the comparison above say little.
	if planned < n/3 {
		t.Fatalf("plans served %d of %d random operations", planned, n)
	}
	t.Logf("plans served %d of %d random operations", planned, n)
}

// FuzzPlans: whatever operation and variables the fuzzer builds, a plan and
// gqlgen answer with the same bytes.
func FuzzPlans(f *testing.F) {
	e := newPlanEnv(f)
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{255, 254, 3, 200, 17, 99, 1, 0, 42})
	f.Add([]byte("topicMessage"))
	f.Fuzz(func(t *testing.T, choices []byte) {
		query, vars := randomOperation(Chooser(choices))
		e.check(t, "fuzzed operation", request(query, vars), "")
	})
}

// randomOperation builds an operation from the choices next gives: mostly
// inside the plans' subset (message lookups, scalar and chunk fields,
// aliases, __typename), sometimes outside it (fragments, directives, the
// topic field, a field twice), with variables of every kind.
func randomOperation(next func() byte) (string, map[string]any) {
	pick := func(options ...string) string { return options[int(next())%len(options)] }
	vars := map[string]any{}
	var declared []string
	// Values a lookup accepts first, then values it refuses or that are no
	// string or number; a quarter of the picks come from the second part.
	type pool struct {
		values []any
		valid  int
	}
	topics := pool{[]any{"0.0.7", "7", "0.9", "0.0.8", 7, "x.y", "", true, nil, "0.0.7 ", "1.2.3.4"}, 5}
	seqs := pool{[]any{1, 2, 3, 4, 5, 999, 0, "3", json.Number("9223372036854775807"), -1, "x", 1.5, json.Number("1e2"), nil, []any{1}}, 9}
	stamps := pool{[]any{"1234567890.000000002", "1234567890.000000003", "1234567890", 1234567890, "x", "1234567890.0000000021", nil}, 4}
	arg := func(name string, p pool, literal func(any) string) string {
		v := p.values[int(next())%p.valid]
		if next()%4 == 0 {
			v = p.values[p.valid+int(next())%(len(p.values)-p.valid)]
		}
		switch next() % 8 {
		case 0: // a literal, when the value has one
			if s := literal(v); s != "" {
				return s
			}
			fallthrough
		default:
			declared = append(declared, name)
			if next()%16 != 0 { // else leave the variable out
				vars[name] = v
			}
			return "$" + name
		}
	}
	literal := func(v any) string {
		switch v := v.(type) {
		case string:
			b, _ := json.Marshal(v)
			return string(b)
		case int:
			b, _ := json.Marshal(v)
			return string(b)
		}
		return ""
	}
	alias := func(name string) string {
		if next()%4 == 0 {
			return pick("a", "b", "x1", name+"2") + ": " + name
		}
		return name
	}
	var fields func(depth int, set []string) string
	fields = func(depth int, set []string) string {
		var b strings.Builder
		// Each field at most once from a random starting point, now and
		// then one twice (gqlgen merges those; plans leave them to it).
		var chosen []string
		start := int(next())
		for i := range set {
			if next()%2 == 0 {
				chosen = append(chosen, set[(start+i)%len(set)])
			}
		}
		if len(chosen) == 0 || next()%32 == 0 {
			chosen = append(chosen, set[int(next())%len(set)])
		}
		for _, f := range chosen {
			switch f {
			case "chunkInfo":
				f = alias(f) + " { " + fields(depth+1, []string{"number", "total", "__typename", "initialTransactionId"}) + " }"
			case "initialTransactionId":
				f = alias(f) + " { " + fields(depth+1, []string{"accountId", "nonce", "scheduled", "transactionValidStart", "__typename"}) + " }"
			case "message":
				f = alias(f) + pick("", "", "(encoding: UTF8)", "(encoding: BASE64)", "(encoding: null)")
			default:
				f = alias(f)
			}
			if next()%64 == 0 {
				f += pick(" @include(if: true)", " @skip(if: false)")
			}
			b.WriteString(f)
			b.WriteByte(' ')
		}
		if next()%64 == 0 {
			b.WriteString(pick("topic { id } ", "... on TopicMessage { sequenceNumber } ", "fullMessage "))
		}
		return b.String()
	}
	messageFields := []string{"consensusTimestamp", "topicId", "sequenceNumber", "message", "runningHash",
		"runningHashVersion", "payerAccountId", "chunkInfo", "__typename"}
	var roots strings.Builder
	for i := range 1 + int(next())%2 {
		if i > 0 {
			roots.WriteString(" r" + string(rune('0'+i)) + ": ")
		}
		switch next() % 5 {
		case 0:
			roots.WriteString("topicMessageByTimestamp(consensusTimestamp: " + arg("ts"+string(rune('0'+i)), stamps, literal) + ")")
		case 1:
			roots.WriteString("__typename")
			continue
		default:
			roots.WriteString("topicMessage(topicId: " + arg("t"+string(rune('0'+i)), topics, literal) +
				", sequenceNumber: " + arg("s"+string(rune('0'+i)), seqs, literal) + ")")
		}
		roots.WriteString(" { " + fields(0, messageFields) + "}")
	}
	var defs []string
	for _, name := range declared {
		typ := map[byte]string{'t': "EntityId!", 's': "Long!"}[name[0]]
		if strings.HasPrefix(name, "ts") {
			typ = "Timestamp!"
		}
		defs = append(defs, "$"+name+": "+typ)
	}
	query := "{ " + roots.String() + " }"
	if len(defs) > 0 {
		query = "query(" + strings.Join(defs, ", ") + ") " + query
	}
	return query, vars
}

// TestPlansTakeWhatThePOSTTransportTakes: a compiled operation is answered
// from its plan only in a request gqlgen's POST transport would take; GET,
// other media types and upgrades get gqlgen's answers.
func TestPlansTakeWhatThePOSTTransportTakes(t *testing.T) {
	t.Parallel()
	e := newPlanEnv(t)
	body := request(bySeq, map[string]any{"t": "0.0.7", "s": 3})
	e.check(t, "learn", body, "")
	for _, c := range []struct {
		method, contentType, upgrade string
		planned                      bool
	}{
		{http.MethodPost, "application/json", "", true},
		{http.MethodPost, "application/json; charset=utf-8", "", true},
		{http.MethodPost, "text/plain", "", false},
		{http.MethodPost, "", "", false},
		{http.MethodPost, "application/json", "websocket", false},
		{http.MethodGet, "application/json", "", false},
	} {
		send := func(h http.Handler) *httptest.ResponseRecorder {
			r := httptest.NewRequest(c.method, Endpoint, strings.NewReader(body))
			if c.method == http.MethodGet {
				r = httptest.NewRequest(c.method, Endpoint+"?query="+url.QueryEscape(bySeq)+
					"&variables="+url.QueryEscape(`{"t":"0.0.7","s":3}`), nil)
			}
			if c.contentType != "" {
				r.Header.Set("Content-Type", c.contentType)
			}
			if c.upgrade != "" {
				r.Header.Set("Upgrade", c.upgrade)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		if planned := e.fromPlan(func(h http.Handler) { send(h) }); planned != c.planned {
			t.Errorf("%s %q upgrade %q: served from a plan %v, want %v", c.method, c.contentType, c.upgrade, planned, c.planned)
		}
		got, want := send(e.compiled), send(e.plain)
		if got.Code != want.Code || got.Body.String() != want.Body.String() ||
			got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("%s %q upgrade %q: %d %s, gqlgen %d %s", c.method, c.contentType, c.upgrade, got.Code, got.Body, want.Code, want.Body)
		}
	}
}

// TestPlansConcurrently: a plan serves many requests at once (the coalescer
// batches their lookups) and each gets its own message; run with -race.
func TestPlansConcurrently(t *testing.T) {
	t.Parallel()
	e := newPlanEnv(t)
	body := func(s int) string { return request(bySeq, map[string]any{"t": "0.0.7", "s": s}) }
	want := map[int]string{}
	for s := 1; s <= 6; s++ {
		want[s] = post(t, e.plain, body(s), "").Body.String()
	}
	e.check(t, "learn", body(1), "")
	var wg sync.WaitGroup
	errs := make(chan string, 16*40)
	for g := range 16 {
		wg.Go(func() {
			for i := range 40 {
				s := 1 + (g+i)%6
				if got := post(t, e.compiled, body(s), "").Body.String(); got != want[s] {
					errs <- fmt.Sprintf("sequence number %d: %s, want %s", s, got, want[s])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Chooser hands out a fuzzer's bytes one by one, then zeros: the choices
// of the random operations of FuzzPlans and FuzzViews.
func Chooser(choices []byte) func() byte {
	return func() byte {
		if len(choices) == 0 {
			return 0
		}
		c := choices[0]
		choices = choices[1:]
		return c
	}
}
