package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/valyala/fastjson"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/app"
	"mirrorql/graph/view"
)

// Compiled operations: the message lookups answered without gqlgen's
// executor.
//
// gqlgen runs every field through the same machinery (a field context, a
// context value, a resolver closure, the result boxed and a marshaler
// closure made), and per request it builds an operation context and
// validates the variables again. For the point lookup
// `topicMessage(topicId, sequenceNumber) { … }` that machinery, not the
// lookup, was most of the service's work and kept GraphQL well below the
// REST route's rate (bench/results/decisions-2026-11.md).
//
// So an operation that gqlgen has parsed and validated once is compiled, when
// it lies inside a small subset, into a plan: the root fields to look up,
// where their arguments come from, and the fields to write. Later requests
// with the same query text run the plan: the same resolver code (the
// argument rules and the query layer of the gqlgen path) and the message's
// view, which writes it as it does under gqlgen (view.CompileMessage), so
// the bytes are gqlgen's.
// Anything a plan does not cover falls back to gqlgen before a byte is
// written: an operation outside the subset, an operation name or extensions
// it was not compiled for, a variable that is missing, null or not a string
// or number, an argument error (gqlgen then answers with its errors), a
// panic (logged and counted: Options.OnPlanPanic). A database error is
// answered here, as gqlgen would, rather than looked up again by gqlgen.
// TestPlansAnswerAsGqlgen holds the two paths to the same bytes.
//
// The subset: one query operation without directives or fragments whose
// variables are non-null EntityId, Long or Timestamp without defaults; root
// fields topicMessage, topicMessageByTimestamp and __typename; under them
// the TopicMessage fields that are its row (not topic, chunks or
// fullMessage), chunkInfo and its initialTransactionId, and __typename; no
// response key twice in one selection; message's encoding only as a literal.
// The operation guard (depth, cost) judged the same document already, and
// nothing in the subset makes its verdict depend on the variables.

// plans holds the compiled operations by query text.
type plans struct {
	r     *Resolver
	cache *lru.LRU[*plan]
}

func newPlans(r *Resolver) *plans { return &plans{r: r, cache: lru.New[*plan](1000)} }

// plan is a compiled operation; a nil root list marks an operation outside
// the subset, so that it is not compiled again.
type plan struct {
	name  string
	roots []rootField
}

// rootField is a root field of a plan: __typename, or a message lookup.
type rootField struct {
	key    []byte // `"alias":`
	name   string // the response key, an error's path
	kind   rootKind
	args   []argSource
	fields view.Selection
}

// rootKind is what a root field is.
type rootKind uint8

const (
	rootTypename rootKind = iota
	rootBySequence
	rootByTimestamp
)

// argSource is an argument: a variable's name, or a literal's text.
type argSource struct {
	variable string
	literal  string
}

// maxArgs is the most arguments a root field of a plan takes.
const maxArgs = 2

// before answers a POST request that gqlgen's POST transport would take,
// and whose operation is compiled, from its plan; anything else goes to next
// (gqlgen's handler, with the dataloaders, which plans do not use). Answering
// ahead of gqlgen's handler also spares the request its operation trace and
// transport selection.
func (p *plans) before(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only a body limitRequest held: next reads it again.
		if body, ok := heldBytes(r); ok && takesPOST(r) && !wantsEventStream(r) {
			parser := planParsers.Get()
			params, ok := decodePlanParams(parser, body)
			served := ok && p.serve(r.Context(), w, r.Header.Get("Accept"), &params)
			planParsers.Put(parser) // params point into it
			if served {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// takesPOST is gqlgen's POST transport's Supports, without parsing the
// media type when it is exactly application/json (as clients send it).
func takesPOST(r *http.Request) bool {
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" && r.Header.Get("Upgrade") == "" {
		return true
	}
	return (transport.POST{}).Supports(r)
}

// planBufs are the buffers answers are written into, kept from one request
// to the next; one that grew past 64 KiB is let go.
var planBufs = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 1024)) }}

// serve answers params from its plan into w; false, with nothing written,
// when gqlgen has to answer it.
func (p *plans) serve(ctx context.Context, w http.ResponseWriter, accept string, params *planParams) (served bool) {
	pl, ok := p.cache.Get(ctx, params.Query)
	if !ok || pl.roots == nil || params.extensions ||
		(params.OperationName != "" && params.OperationName != pl.name) {
		return false
	}
	defer func() {
		// gqlgen answers instead; the panic is logged and counted, since
		// gqlgen may well answer without one and hide it.
		if v := recover(); v != nil {
			served = false
			p.r.opts.Log.ErrorContext(ctx, "graphql: panic in a compiled operation; gqlgen answers it",
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if p.r.opts.OnPlanPanic != nil {
				p.r.opts.OnPlanPanic()
			}
		}
	}()
	var errs gqlerror.List
	buf := planBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 64<<10 {
			planBufs.Put(buf)
		}
	}()
	buf.WriteString(`{"data":{`)
	for i := range pl.roots {
		f := &pl.roots[i]
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(f.key)
		if f.kind == rootTypename {
			graphql.MarshalString("Query").MarshalGQL(buf)
			continue
		}
		var args [maxArgs]string
		if !f.argTexts(params, args[:len(f.args)]) {
			return false
		}
		m, err := f.lookup(ctx, p.r, &args)
		var u *app.Unavailable
		switch {
		case errors.As(err, &u):
			// Answered here as gqlgen answers it (the field null, the error
			// presented with its path): handing it to gqlgen would run the
			// failed lookup a second time.
			e := p.r.presentError(ctx, err)
			e.Path = ast.Path{ast.PathName(f.name)}
			errs = append(errs, e)
			buf.WriteString("null")
			continue
		case err != nil:
			return false
		}
		if m == nil {
			buf.WriteString("null")
			continue
		}
		f.fields.WriteMessage(buf, m)
	}
	buf.WriteString("}}")
	w.Header().Set("Content-Type", responseType(accept))
	if len(errs) > 0 {
		data := buf.Bytes()[len(`{"data":`) : buf.Len()-1]
		b, err := json.Marshal(&graphql.Response{Errors: errs, Data: data})
		if err != nil {
			panic(err) // as postJSON: errors that are not JSON
		}
		w.Write(b) //nolint:errcheck // the client is gone
		return true
	}
	w.Write(buf.Bytes()) //nolint:errcheck // the client is gone
	return true
}

// planParams are a POST body's parameters as a plan reads them: its
// variables left in the parser's tree until an argument asks for one. A
// plan takes only strings and numbers, and the rest of a body's variables
// need not be decoded into values at all (BenchmarkDecodeParams). Query is
// the parser's bytes, not a copy (only the plans' cache reads it, and keeps
// no key it is asked for): like the variables it lives as long as the
// parser is not put back.
type planParams struct {
	Query, OperationName string
	extensions           bool             // whether there are any: a plan is not compiled for them
	variables            *fastjson.Object // nil when there are none; owned by the parser
}

// planParsers are fastjson's parsers, kept from one request to the next: a
// parser reuses its tree, so that a body decodes without allocating.
var planParsers fastjson.ParserPool

// decodePlanParams decodes a POST body as decodeParams does (FuzzPlanParams
// holds the two together), into p's tree; false when it does not decode, or
// when it is a body that only encoding/json's rules decide, which gqlgen's
// path then takes: data after its object (which decodeParams ignores), a
// member named other than exactly query, operationName, variables or
// extensions (encoding/json matches names regardless of case), one named
// twice (encoding/json merges objects), or a string that decoding changes
// (invalid UTF-8, a lone surrogate: see decodedString).
//
// fastjson's parser takes some bodies that are not JSON (a control
// character in a string, a bad escape, 01): ValidateBytes, which holds to
// the RFC as encoding/json does, refuses them first.
func decodePlanParams(p *fastjson.Parser, body []byte) (params planParams, ok bool) {
	if fastjson.ValidateBytes(body) != nil {
		return params, false
	}
	v, err := p.ParseBytes(body)
	if err != nil {
		return params, false
	}
	obj, err := v.Object()
	if err != nil {
		return params, false
	}
	var seen [4]bool
	ok = true
	obj.Visit(func(key []byte, v *fastjson.Value) {
		i := paramIndex(key)
		if !ok || i < 0 || seen[i] {
			ok = false
			return
		}
		seen[i] = true
		switch i {
		case 0:
			var q []byte
			if q, ok = nullableBytes(v); ok && len(q) > 0 {
				params.Query = unsafe.String(&q[0], len(q))
			}
		case 1:
			params.OperationName, ok = nullableString(v)
		case 2:
			params.variables, ok = nullableObject(v)
		case 3:
			var ext *fastjson.Object
			ext, ok = nullableObject(v)
			params.extensions = ext != nil && ext.Len() > 0
		}
	})
	return params, ok
}

// paramIndex is the index of a POST body's member, named as
// graphql.RawParams names them, in query, operationName, variables,
// extensions; -1 for any other name.
func paramIndex(key []byte) int {
	switch string(key) {
	case "query":
		return 0
	case "operationName":
		return 1
	case "variables":
		return 2
	case "extensions":
		return 3
	}
	return -1
}

// nullableString is a string member's value, "" for null; false for
// anything else, or a string decodedString cannot vouch for.
func nullableString(v *fastjson.Value) (string, bool) {
	b, ok := nullableBytes(v)
	return string(b), ok
}

// nullableBytes is nullableString's bytes, in the parser's tree.
func nullableBytes(v *fastjson.Value) ([]byte, bool) {
	if v.Type() == fastjson.TypeNull {
		return nil, true
	}
	return decodedString(v)
}

// nullableObject is an object member's value, nil for null; false for
// anything else.
func nullableObject(v *fastjson.Value) (*fastjson.Object, bool) {
	if v.Type() == fastjson.TypeNull {
		return nil, true
	}
	o, err := v.Object()
	return o, err == nil
}

// decodedString is a string value as encoding/json decodes it; false when
// that may differ from fastjson's: where encoding/json writes U+FFFD (invalid
// UTF-8, a lone surrogate escape) fastjson keeps the bytes or the escape's
// text. Refusing every decoded string that holds U+FFFD or the text \u is
// wider than needed, and costs only such a request gqlgen's path.
func decodedString(v *fastjson.Value) ([]byte, bool) {
	b, err := v.StringBytes()
	if err != nil || !utf8.Valid(b) || bytes.Contains(b, replacementChar) || bytes.Contains(b, escapedU) {
		return nil, false
	}
	return b, true
}

var replacementChar, escapedU = []byte(string(utf8.RuneError)), []byte(`\u`)

// variable is the text of a variable as the input scalars take it
// (view.EntityIDArg and the others: view.ArgText) from the value decodeParams
// decodes when it is a string or a number (json.Number, its text); false
// for anything else. Of a name given twice the last value is
// encoding/json's.
func (p *planParams) variable(name string) (string, bool) {
	if p.variables == nil {
		return "", false
	}
	var last *fastjson.Value
	p.variables.Visit(func(key []byte, v *fastjson.Value) {
		if string(key) == name {
			last = v
		}
	})
	if last == nil {
		return "", false
	}
	switch last.Type() {
	case fastjson.TypeString:
		if b, ok := decodedString(last); ok {
			return string(b), true
		}
	case fastjson.TypeNumber:
		var buf [32]byte
		return string(last.MarshalTo(buf[:0])), true
	}
	return "", false
}

// argTexts puts the arguments' texts into out; false when a variable is
// missing, null, or of a kind other than a string or a number (gqlgen's
// coercion and its errors are then gqlgen's to give).
func (f *rootField) argTexts(params *planParams, out []string) bool {
	for i, a := range f.args {
		if a.variable == "" {
			out[i] = a.literal
			continue
		}
		v, ok := params.variable(a.variable)
		if !ok {
			return false
		}
		out[i] = v
	}
	return true
}

// lookup runs the root field's resolver code, without gqlgen's context, on
// its arguments' texts: nil and no error when there is no such message.
func (f *rootField) lookup(ctx context.Context, r *Resolver, args *[maxArgs]string) (*view.TopicMessage, error) {
	if f.kind == rootByTimestamp {
		return r.messageByTimestamp(ctx, view.TimestampArg(args[0]))
	}
	return lookupBySequence(ctx, r, view.EntityIDArg(args[0]), view.LongArg(args[1]))
}

// learn compiles the operation gqlgen has just parsed and validated for
// query, unless it was compiled before.
func (p *plans) learn(ctx context.Context, query string, rc *graphql.OperationContext) {
	if query == "" {
		return
	}
	if _, seen := p.cache.Get(ctx, query); seen {
		return
	}
	p.cache.Add(ctx, query, compile(rc.Doc))
}

// compile is the plan of doc; its roots are nil when doc is outside the
// subset.
func compile(doc *ast.QueryDocument) *plan {
	if doc == nil || len(doc.Operations) != 1 || len(doc.Fragments) > 0 {
		return &plan{}
	}
	op := doc.Operations[0]
	if op.Operation != ast.Query || len(op.Directives) > 0 {
		return &plan{}
	}
	for _, v := range op.VariableDefinitions {
		if v.Type == nil || !v.Type.NonNull || v.Type.Elem != nil || v.DefaultValue != nil || len(v.Directives) > 0 {
			return &plan{}
		}
		switch v.Type.NamedType {
		case "EntityId", "Long", "Timestamp":
		default:
			return &plan{}
		}
	}
	roots := make([]rootField, 0, len(op.SelectionSet))
	ok := eachField(op.SelectionSet, func(f *ast.Field) bool {
		root := rootField{key: responseKey(f), name: f.Alias}
		compiled := true
		switch f.Name {
		case "__typename":
			root.kind = rootTypename
		case "topicMessage":
			root.kind = rootBySequence
			root.args = compileArgs(f, "topicId", "sequenceNumber")
			root.fields, compiled = view.CompileMessage(f.SelectionSet)
		case "topicMessageByTimestamp":
			root.kind = rootByTimestamp
			root.args = compileArgs(f, "consensusTimestamp")
			root.fields, compiled = view.CompileMessage(f.SelectionSet)
		default:
			return false
		}
		if root.kind != rootTypename && (root.args == nil || !compiled) {
			return false
		}
		roots = append(roots, root)
		return true
	})
	if !ok || len(roots) == 0 {
		return &plan{}
	}
	return &plan{name: op.Name, roots: roots}
}

// eachField calls compile for every selection of set, in order; false when a
// selection is a fragment, has directives, or repeats a response key (gqlgen
// merges those), or when compile says false.
func eachField(set ast.SelectionSet, compile func(*ast.Field) bool) bool {
	keys := make(map[string]bool, len(set))
	for _, sel := range set {
		f, ok := sel.(*ast.Field)
		if !ok || len(f.Directives) > 0 || keys[f.Alias] || f.Definition == nil {
			return false
		}
		keys[f.Alias] = true
		if !compile(f) {
			return false
		}
	}
	return true
}

// compileArgs are f's arguments in the order given; nil when one is not a
// variable, a string or an integer.
func compileArgs(f *ast.Field, names ...string) []argSource {
	if len(f.Arguments) != len(names) {
		return nil
	}
	out := make([]argSource, len(names))
	for i, name := range names {
		a := f.Arguments.ForName(name)
		if a == nil || a.Value == nil {
			return nil
		}
		switch a.Value.Kind {
		case ast.Variable:
			out[i].variable = a.Value.Raw
		case ast.StringValue, ast.BlockValue, ast.IntValue:
			v, err := a.Value.Value(nil)
			if err != nil {
				return nil
			}
			out[i].literal = view.ArgText(v)
		default:
			return nil
		}
	}
	return out
}

func responseKey(f *ast.Field) []byte {
	var b bytes.Buffer
	graphql.MarshalString(f.Alias).MarshalGQL(&b)
	b.WriteByte(':')
	return b.Bytes()
}

// The root fields' resolver code, as the gqlgen path runs it, on the
// arguments' texts (what the scalars' UnmarshalGQL, which its generated code
// calls, makes of their values: view.ArgText).

func lookupBySequence(ctx context.Context, r *Resolver, topicID view.EntityIDArg, seq view.LongArg) (*view.TopicMessage, error) {
	m, errs, err := r.messageBySequence(ctx, topicID, seq)
	if len(errs) > 0 {
		return nil, errNotPlanned
	}
	return m, err
}

// errNotPlanned sends a request whose arguments the resolver refuses to
// gqlgen, which reports them.
var errNotPlanned = errors.New("graph: left to gqlgen")
