package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/graph"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// viewRows are messages of every shape a view writes: chunked with a
// protobuf initial transaction id (scheduled, with a nonce) and with the
// legacy payer and valid start, a NULL chunk total, a NULL payer, a NULL
// running hash version, bytes that are not UTF-8 and bytes JSON escapes;
// on topics 0.0.7 (with every row) and 0.0.8 (messages only, no entity row).
func viewRows() *memstore.Store {
	s := memstore.New()
	payer, validStart := model.EntityID(98), model.Timestamp(1_234_567_880_000_000_007)
	v2 := int16(2)
	one, two, three := int32(1), int32(2), int32(3)
	initial := transactionID(1_234_567_880, 5, 98, true, 7)
	s.AddTopics(model.Topic{ID: 7, HasTopic: true, HasEntity: true, Memo: "seven"})
	msgs := []model.TopicMessage{
		{SequenceNumber: 1, Message: []byte("plain"), RunningHashVersion: &v2, PayerAccountID: &payer},
		{SequenceNumber: 2, Message: []byte("a \"quoted\"\n\\ line\x01\x7f"), PayerAccountID: &payer},
		{SequenceNumber: 3, Message: []byte{0xff, 0xfe, 'x', 0xc3}, PayerAccountID: nil},
		{SequenceNumber: 4, Message: []byte("chunk 1"), ChunkNum: &one, ChunkTotal: &two, InitialTransactionID: initial, PayerAccountID: &payer},
		{SequenceNumber: 5, Message: []byte("chunk 2"), ChunkNum: &two, ChunkTotal: &two, InitialTransactionID: initial, PayerAccountID: &payer},
		{SequenceNumber: 6, Message: []byte("legacy 1"), ChunkNum: &one, ChunkTotal: &three, PayerAccountID: &payer, ValidStartTimestamp: &validStart},
		{SequenceNumber: 7, Message: []byte("no total"), ChunkNum: &one, PayerAccountID: &payer, ValidStartTimestamp: &validStart},
		{SequenceNumber: 8, Message: []byte{}, RunningHash: nil, PayerAccountID: &payer},
	}
	for i := range msgs {
		m := msgs[i]
		m.TopicID = 7
		m.ConsensusTimestamp = model.Timestamp(1_234_567_890_000_000_000 + int64(m.SequenceNumber))
		if m.RunningHash == nil && m.SequenceNumber != 8 {
			m.RunningHash = []byte{byte(m.SequenceNumber), 0xfb, 0xff}
		}
		s.AddMessages(m)
		s.AddTransactions(memstore.Transaction{ConsensusTimestamp: m.ConsensusTimestamp,
			Type: memstore.TypeConsensusSubmitMessage, Result: memstore.ResultSuccess, EntityID: 7})
	}
	for seq := int64(1); seq <= 3; seq++ {
		s.AddMessages(model.TopicMessage{TopicID: 8, SequenceNumber: seq, PayerAccountID: &payer,
			ConsensusTimestamp: model.Timestamp(1_234_567_900_000_000_000 + seq), Message: []byte{byte(seq)}, RunningHash: []byte{9}})
	}
	return s
}

// transactionID is a protobuf TransactionID.
func transactionID(seconds, nanos int64, num int64, scheduled bool, nonce int32) []byte {
	var start, account, b []byte
	start = protowire.AppendTag(start, 1, protowire.VarintType)
	start = protowire.AppendVarint(start, uint64(seconds))
	start = protowire.AppendTag(start, 2, protowire.VarintType)
	start = protowire.AppendVarint(start, uint64(nanos))
	account = protowire.AppendTag(account, 3, protowire.VarintType)
	account = protowire.AppendVarint(account, uint64(num))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, start)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, account)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeBool(scheduled))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(nonce))
	return b
}

// viewPair is the same store served twice: messages written by their views
// (the default) and field by field by gqlgen's executor (the reference).
type viewPair struct{ views, executor http.Handler }

func newViewPair(s *memstore.Store) viewPair {
	o := graph.Options{LoaderWait: 5 * time.Millisecond, Now: func() time.Time { return fixedNow },
		NoCompiledOperations: true}
	ref := o
	ref.FieldByField = true
	a := app.New(s, app.Rules{})
	return viewPair{graph.NewHandler(a, o), graph.NewHandler(a, ref)}
}

func post(h http.Handler, query string, vars map[string]any) []byte {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, graph.Endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	out, _ := io.ReadAll(w.Result().Body)
	return []byte(fmt.Sprintf("%d %s", w.Code, out))
}

// same asks both and fails unless their answers are the same bytes.
func (p viewPair) same(t *testing.T, query string, vars map[string]any) []byte {
	t.Helper()
	got, want := post(p.views, query, vars), post(p.executor, query, vars)
	if !bytes.Equal(got, want) {
		t.Errorf("%s %v\n views: %s\n executor: %s", query, vars, got, want)
	}
	return got
}

const allMessageFields = `__typename topicId sequenceNumber consensusTimestamp message payerAccountId runningHash
	runningHashVersion chunkInfo { __typename number total initialTransactionId { __typename accountId nonce scheduled transactionValidStart } }`

// TestViewsWriteAsExecutor holds the views to gqlgen's executor: every
// selection of a message, a list of messages or of their edges gives the
// same bytes written in one pass as field by field.
func TestViewsWriteAsExecutor(t *testing.T) {
	t.Parallel()
	p := newViewPair(viewRows())
	tests := []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{"every field of a page", `{ topicMessages(topicId: "7", first: 10) { nodes { ` + allMessageFields + ` } } }`, nil},
		{"every field of the edges", `{ topicMessages(topicId: "7", first: 10) { edges { __typename cursor node { ` + allMessageFields + ` } } pageInfo { hasNextPage endCursor } } }`, nil},
		{"nodes, edges and page info", `{ topicMessages(topicId: "7", first: 3, order: DESC) { pageInfo { endCursor } nodes { sequenceNumber } edges { cursor } } }`, nil},
		{"an empty page", `{ topicMessages(topicId: "7", sequenceNumber: {gt: 100}) { nodes { sequenceNumber } edges { cursor node { topicId } } } }`, nil},
		{"one message", `query($s: Long!) { topicMessage(topicId: "7", sequenceNumber: $s) { ` + allMessageFields + ` } }`, map[string]any{"s": 4}},
		{"one legacy chunk", `{ topicMessage(topicId: "7", sequenceNumber: 7) { ` + allMessageFields + ` } }`, nil},
		{"a message by timestamp", `{ topicMessageByTimestamp(consensusTimestamp: "1234567890.000000005") { ` + allMessageFields + ` } }`, nil},
		{"no such message", `{ topicMessage(topicId: "7", sequenceNumber: 99) { topicId } }`, nil},
		{"aliases, repeats and order", `{ topicMessages(topicId: "7") { nodes { b: sequenceNumber a: topicId sequenceNumber b: sequenceNumber
			x: chunkInfo { number } y: chunkInfo { total n: number } } } }`, nil},
		{"encodings", `query($e: MessageEncoding) { topicMessages(topicId: "7") { nodes { message u: message(encoding: UTF8)
			b: message(encoding: BASE64) v: message(encoding: $e) } } }`, map[string]any{"e": "UTF8"}},
		{"an encoding variable unset", `query($e: MessageEncoding) { topicMessages(topicId: "7") { nodes { v: message(encoding: $e) } } }`, nil},
		{"an encoding null", `{ topicMessages(topicId: "7") { nodes { message(encoding: null) } } }`, nil},
		{"fragments", `query { topicMessages(topicId: "7") { nodes { ...M ... on TopicMessage { topicId } ... { runningHash } } } }
			fragment M on TopicMessage { sequenceNumber chunkInfo { ...C } }
			fragment C on ChunkInfo { number initialTransactionId { ...T } }
			fragment T on TransactionId { nonce accountId }`, nil},
		{"skip and include", `query($yes: Boolean!, $no: Boolean!) { topicMessages(topicId: "7") { nodes {
			sequenceNumber @include(if: $yes) topicId @skip(if: $yes) message @include(if: $no)
			chunkInfo @skip(if: $no) { number @skip(if: true) total } ... @include(if: $no) { runningHash } } } }`,
			map[string]any{"yes": true, "no": false}},
		{"a topic's messages", `{ topic(id: "7") { id memo messages(first: 4, sequenceNumber: {gte: 3}) { nodes { ` + allMessageFields + ` } pageInfo { hasNextPage endCursor } } } }`, nil},
		{"a topic's message and latest message", `{ topic(id: "7") { message(sequenceNumber: 5) { ` + allMessageFields + ` } latestMessage { sequenceNumber message } messageCount } }`, nil},
		{"topics' messages", `{ topics { nodes { id messages(first: 2) { edges { cursor node { sequenceNumber } } } latestMessage { topicId } } } }`, nil},
		{"messages with their topics", `{ topicMessages(topicId: "7") { nodes { sequenceNumber topic { id memo } } } }`, nil},
		{"a topic without an entity row", `{ topicMessages(topicId: "8") { nodes { sequenceNumber topic { id } } edges { node { topic { memo } } } } }`, nil},
		{"chunks and full messages", `{ topicMessages(topicId: "7", sequenceNumber: {gte: 4}) { nodes { sequenceNumber
			chunks { sequenceNumber message chunkInfo { number } topic { id } } fullMessage f: fullMessage(encoding: UTF8) } } }`, nil},
		{"edges whose nodes load", `{ topicMessages(topicId: "7", first: 5) { edges { cursor node { sequenceNumber topic { id } } } } }`, nil},
		{"edges, one node that loads and one that does not", `{ topicMessages(topicId: "7", first: 5) { edges { a: node { sequenceNumber } b: node { fullMessage } cursor } } }`, nil},
		{"chunks of one message", `{ topicMessage(topicId: "7", sequenceNumber: 5) { chunks { ` + allMessageFields + ` } fullMessage } }`, nil},
		{"typename only", `{ topicMessages(topicId: "7") { __typename nodes { __typename } edges { __typename node { __typename } } } }`, nil},
		{"an argument error beside a page", `{ a: topicMessages(topicId: "7") { nodes { sequenceNumber } } b: topicMessage(topicId: "x", sequenceNumber: 1) { topicId } }`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := p.same(t, tc.query, tc.vars)
			if !bytes.HasPrefix(got, []byte("200 ")) {
				t.Errorf("not answered: %s", got)
			}
		})
	}
}

// TestPageNeedsNoGoroutines: a page of plain messages is written by the
// views without a goroutine for any element, where gqlgen's generated code
// starts one for each (the reference, written field by field, still does).
// The count is the process's goroutines created during one request: the
// test is not parallel, so nothing else runs beside it.
func TestPageNeedsNoGoroutines(t *testing.T) {
	s := memstore.New()
	for seq := int64(1); seq <= 100; seq++ {
		s.AddMessages(model.TopicMessage{TopicID: 7, SequenceNumber: seq, ConsensusTimestamp: model.Timestamp(seq), Message: []byte{1}, RunningHash: []byte{2}})
	}
	query := `{ topicMessages(topicId: "7", first: 100) { nodes { sequenceNumber message chunkInfo { number } } edges { cursor node { topicId } } } }`
	noGoroutinePerElement(t, newViewPair(s), query, 200, "a page of 100 plain messages")
}

// noGoroutinePerElement fails unless the views answer query starting fewer
// than 10 goroutines, where the reference (gqlgen's executor) starts at
// least perElement, in the least of three tries (a runtime goroutine may
// start beside one). The count is the process's goroutines created during
// one request: the caller is not parallel, so nothing else runs beside it.
func noGoroutinePerElement(t *testing.T, p viewPair, query string, perElement uint64, what string) {
	t.Helper()
	created := func(h http.Handler) uint64 {
		sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(sample)
		before := sample[0].Value.Uint64()
		if got := post(h, query, nil); !bytes.HasPrefix(got, []byte("200 ")) || bytes.Contains(got, []byte(`"errors"`)) {
			t.Fatalf("not answered: %.200s", got)
		}
		metrics.Read(sample)
		return sample[0].Value.Uint64() - before
	}
	for range 3 {
		views, ref := created(p.views), created(p.executor)
		if ref < perElement {
			t.Fatalf("the reference started %d goroutines for %s: the count misses them", ref, what)
		}
		if views < 10 {
			return
		}
		t.Logf("the views started %d goroutines for %s", views, what)
	}
	t.Errorf("%s starts a goroutine per element again", what)
}

// FuzzViews: whatever selection of messages the fuzzer builds, in whatever
// place (a page's nodes or edges, a lookup, a topic's page, chunks), the
// views and gqlgen's executor answer with the same bytes.
func FuzzViews(f *testing.F) {
	p := newViewPair(viewRows())
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{255, 254, 3, 200, 17, 99, 1, 0, 42})
	f.Add([]byte("chunkInfo initialTransactionId"))
	f.Fuzz(func(t *testing.T, choices []byte) {
		query, vars := randomSelection(graph.Chooser(choices))
		p.same(t, query, vars)
	})
}

// TestViewsRandomSelections is FuzzViews over a few hundred generated
// selections, in every run of the suite.
func TestViewsRandomSelections(t *testing.T) {
	t.Parallel()
	p := newViewPair(viewRows())
	r := rand.New(rand.NewPCG(3, 4))
	answered := 0
	for range 300 {
		query, vars := randomSelection(func() byte { return byte(r.UintN(256)) })
		if !bytes.Contains(p.same(t, query, vars), []byte(`"errors"`)) {
			answered++
		}
	}
	// The generator makes valid operations most of the time; were they
	// refused, the comparison would say little.
	if answered < 200 {
		t.Errorf("%d of 300 random operations answered without errors", answered)
	}
}

// randomSelection builds an operation that writes messages: a selection of
// their fields (plain ones mostly, now and then one that loads), with
// aliases, fragments, @skip and @include, message encodings from literals
// and variables, in one of the places a message is written.
func randomSelection(next func() byte) (string, map[string]any) {
	pick := func(options ...string) string { return options[int(next())%len(options)] }
	// The variables an operation may use; it declares those it does.
	values := map[string]any{"yes": true, "no": false, "enc": []any{"UTF8", "BASE64", nil}[next()%3]}
	types := map[string]string{"yes": "Boolean!", "no": "Boolean!", "enc": "MessageEncoding"}
	vars := map[string]any{}
	use := func(value string) string {
		if name, ok := strings.CutPrefix(value, "$"); ok {
			vars[name] = values[name]
		}
		return value
	}
	directive := func() string {
		switch next() % 8 {
		case 0:
			return " @skip(if: " + use(pick("$yes", "$no", "true", "false")) + ")"
		case 1:
			return " @include(if: " + use(pick("$yes", "$no", "true", "false")) + ")"
		}
		return ""
	}
	alias := func(name string) string {
		if next()%4 == 0 {
			return pick("a", "b", name) + ": " + name
		}
		return name
	}
	var object func(depth int, typ string, fields []string) string
	sub := map[string]func(depth int) string{
		"chunkInfo": func(d int) string {
			return object(d+1, "ChunkInfo", []string{"__typename", "number", "total", "initialTransactionId"})
		},
		"initialTransactionId": func(d int) string {
			return object(d+1, "TransactionId", []string{"__typename", "accountId", "nonce", "scheduled", "transactionValidStart"})
		},
		"message": func(int) string {
			if next()%2 == 0 {
				return ""
			}
			return "(encoding: " + use(pick("UTF8", "BASE64", "$enc", "null")) + ")"
		},
		"fullMessage": func(int) string { return pick("", "(encoding: UTF8)") },
		"topic":       func(int) string { return " { " + pick("id", "memo", "id memo", "__typename") + " }" },
		"chunks": func(d int) string {
			return object(d+1, "TopicMessage", []string{"sequenceNumber", "message", "chunkInfo", "__typename"})
		},
	}
	object = func(depth int, typ string, fields []string) string {
		var b strings.Builder
		b.WriteString(" {")
		n := 1 + int(next())%5
		for range n {
			name := fields[int(next())%len(fields)]
			field := alias(name)
			if s := sub[name]; s != nil {
				field += s(depth)
			}
			switch next() % 10 {
			case 0:
				b.WriteString(" ... on " + typ + directive() + " { " + field + " }")
			case 1:
				b.WriteString(" ..." + directive() + " { " + field + " }")
			default:
				b.WriteString(" " + field + directive())
			}
		}
		b.WriteString(" }")
		return b.String()
	}
	messageFields := []string{"__typename", "topicId", "sequenceNumber", "consensusTimestamp", "message",
		"payerAccountId", "runningHash", "runningHashVersion", "chunkInfo", "chunkInfo", "message"}
	if next()%6 == 0 {
		messageFields = append(messageFields, "topic", "chunks", "fullMessage")
	}
	sel := object(0, "TopicMessage", messageFields)
	page := pick(`topicMessages(topicId: "7")`, `topicMessages(topicId: "7", first: 3, order: DESC)`,
		`topicMessages(topicId: "7", sequenceNumber: {gte: 4})`, `topicMessages(topicId: "8")`)
	var query string
	switch next() % 6 {
	case 0:
		query = page + " { nodes" + sel + " }"
	case 1:
		query = page + " { edges { cursor node" + sel + " } pageInfo { endCursor } }"
	case 2:
		query = page + " { nodes" + sel + " edges { node" + sel + " } }"
	case 3:
		query = `topicMessage(topicId: "7", sequenceNumber: ` + pick("1", "3", "4", "7", "99") + ")" + sel
	case 4:
		query = `topic(id: "7") { messages(first: 4) { nodes` + sel + ` } latestMessage` + sel + " }"
	default:
		query = `topicMessage(topicId: "7", sequenceNumber: 5) { chunks` + sel + " }"
	}
	var decl []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		decl = append(decl, "$"+name+": "+types[name])
	}
	if len(decl) == 0 {
		return "{ " + query + " }", vars
	}
	return "query(" + strings.Join(decl, ", ") + ") { " + query + " }", vars
}

// TestEveryMessageFieldIsPlainOrLoads: each field of TopicMessage is either
// written by the views or listed as one that loads (and is then a resolver
// of gqlgen's): a field added to the schema must be put in one place or the
// other (docs/graphql.md, "Performance").
func TestEveryMessageFieldIsPlainOrLoads(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	resolvers := reflect.TypeFor[graph.TopicMessageResolver]()
	for _, f := range schema.Types["TopicMessage"].Fields {
		_, resolved := resolvers.MethodByName(strings.ToUpper(f.Name[:1]) + f.Name[1:])
		switch plain, loads := view.Writes(f.Name), view.Loads[f.Name]; {
		case plain == loads:
			t.Errorf("TopicMessage.%s: written by the views %t, loads %t: it must be one of the two", f.Name, plain, loads)
		case loads && !resolved:
			t.Errorf("TopicMessage.%s loads but is no resolver of gqlgen's (gqlgen.yml)", f.Name)
		case plain && resolved:
			t.Errorf("TopicMessage.%s is a resolver, which the views do not call", f.Name)
		}
	}
}

// TestDeferredUnderViews: a fragment deferred under a message the views
// hand to gqlgen's executor is answered as gqlgen answers it (no transport
// here delivers what follows): left null, and the response says more would
// follow.
func TestDeferredUnderViews(t *testing.T) {
	t.Parallel()
	p := newViewPair(viewRows())
	for _, h := range []http.Handler{p.views, p.executor} {
		got := post(h, `{ topicMessages(topicId: "7", first: 2) { nodes { sequenceNumber ... @defer { topic { id } } } } }`, nil)
		want := `200 {"data":{"topicMessages":{"nodes":[{"sequenceNumber":1,"topic":null},{"sequenceNumber":2,"topic":null}]}},"hasNext":true}`
		if string(got) != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
