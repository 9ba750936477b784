package view

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"mirrorql/model"
)

// Messages are written by the views themselves, not field by field by
// gqlgen's executor.
//
// gqlgen binds the GraphQL type TopicMessage, and the lists of messages
// (TopicMessageConnection's nodes and edges), to these views as context
// marshalers (gqlgen.yml): its executor parses, validates and resolves the
// operation as always, and where a message or a list of them is to be
// written it hands the view over instead of running a field context, a
// resolver closure and a marshaler for every field of every row, and a
// goroutine for every element of a list. The view collects the selection with
// gqlgen's own CollectFields (fragments, aliases, @skip and @include) once per
// object or list, and writes each row's fields with the same methods and
// scalar marshalers the executor would call, so the bytes are the executor's.
//
// A message's plain fields are its row (the columns, chunkInfo and the
// initial transaction id under it): nothing can fail or be null where the
// schema says non-null, so the view writes them in one pass. Its other fields
// load (topic, chunks, fullMessage: the request's dataloaders, errors with
// their paths): a selection with one of those is handed back to gqlgen's
// executor (the Executor in the request's context) for each message, a list's
// elements side by side as gqlgen would run them, so that the loaders batch a
// page's keys as before.

// Executor runs gqlgen's generated executor on one message or edge, for
// the selections a view does not write alone. The GraphQL face puts it in
// every request's context (WithExecutor).
type Executor interface {
	ExecMessage(ctx context.Context, sel ast.SelectionSet, m *TopicMessage) graphql.Marshaler
	ExecEdge(ctx context.Context, sel ast.SelectionSet, cursor string, m *TopicMessage) graphql.Marshaler
	// ExecSchedule and ExecScheduleEdge write a schedule and its edge field
	// by field, for the tests' reference only (schedules.go).
	ExecSchedule(ctx context.Context, sel ast.SelectionSet, s *Schedule) graphql.Marshaler
	ExecScheduleEdge(ctx context.Context, sel ast.SelectionSet, cursor string, s *Schedule) graphql.Marshaler
}

type executorKey struct{}

type executor struct {
	Executor
	always bool
}

// WithExecutor is ctx with the executor of selections that load; with
// always, every message is written by it, field by field (the views'
// reference in tests).
func WithExecutor(ctx context.Context, e Executor, always bool) context.Context {
	return context.WithValue(ctx, executorKey{}, executor{e, always})
}

// ExecutorOf is the executor WithExecutor put in ctx, nil when there is none.
func ExecutorOf(ctx context.Context) Executor {
	e, _ := ctx.Value(executorKey{}).(executor)
	return e.Executor
}

func executorOf(ctx context.Context) executor {
	e, _ := ctx.Value(executorKey{}).(executor)
	if e.Executor == nil {
		panic("view: no executor in the context; serve through graph.NewHandler")
	}
	return e
}

// Loads are the TopicMessage fields that are not its row: a selection with
// one of them goes through gqlgen's executor. (Any field the views do not
// know does: this list says which are meant to.)
var Loads = map[string]bool{"topic": true, "chunks": true, "fullMessage": true}

// Writes tells the TopicMessage fields the views write themselves.
func Writes(field string) bool {
	_, ok := messageFields[field]
	return ok
}

// The field kinds of a message's selection.
type fieldKind uint8

const (
	fieldTypename fieldKind = iota
	fieldTopicID
	fieldSequenceNumber
	fieldConsensusTimestamp
	fieldMessage
	fieldPayerAccountID
	fieldRunningHash
	fieldRunningHashVersion
	fieldChunkInfo
	// ChunkInfo's
	fieldNumber
	fieldTotal
	fieldInitialTransactionID
	// TransactionId's
	fieldAccountID
	fieldNonce
	fieldScheduled
	fieldValidStart
)

var messageFields = map[string]fieldKind{
	"__typename": fieldTypename, "topicId": fieldTopicID, "sequenceNumber": fieldSequenceNumber,
	"consensusTimestamp": fieldConsensusTimestamp, "message": fieldMessage,
	"payerAccountId": fieldPayerAccountID, "runningHash": fieldRunningHash,
	"runningHashVersion": fieldRunningHashVersion, "chunkInfo": fieldChunkInfo,
}

var chunkInfoFields = map[string]fieldKind{
	"__typename": fieldTypename, "number": fieldNumber, "total": fieldTotal,
	"initialTransactionId": fieldInitialTransactionID,
}

var transactionIDFields = map[string]fieldKind{
	"__typename": fieldTypename, "accountId": fieldAccountID, "nonce": fieldNonce,
	"scheduled": fieldScheduled, "transactionValidStart": fieldValidStart,
}

// The implementors CollectFields matches fragments against: each type is
// its own only implementor.
var (
	isTopicMessage  = []string{"TopicMessage"}
	isChunkInfo     = []string{"ChunkInfo"}
	isTransactionID = []string{"TransactionId"}
	isMessageEdge   = []string{"TopicMessageEdge"}
)

// selection is an object's collected fields, each with what writing it
// needs: its kind, the encoding of `message`, the selection under an object
// field.
type selection struct {
	typename string
	fields   []selected
}

type selected struct {
	alias    string
	kind     fieldKind
	encoding *MessageEncoding
	sub      *selection
}

// messageSelection is sel over a TopicMessage; loads tells a selection that
// only gqlgen's executor can write.
func messageSelection(oc *graphql.OperationContext, sel ast.SelectionSet) (s *selection, loads bool) {
	fields := graphql.CollectFields(oc, sel, isTopicMessage)
	s = &selection{typename: "TopicMessage", fields: make([]selected, 0, len(fields))}
	for _, f := range fields {
		kind, plain := messageFields[f.Name]
		if !plain {
			// topic, chunks, fullMessage (validation allows no other name)
			return nil, true
		}
		out := selected{alias: f.Alias, kind: kind}
		switch kind {
		case fieldMessage:
			out.encoding = encodingArg(oc, f.Field)
		case fieldChunkInfo:
			out.sub = chunkInfoSelection(oc, f.Selections)
		}
		s.fields = append(s.fields, out)
	}
	return s, false
}

// chunkInfoSelection is sel over a ChunkInfo, with its initialTransactionId's.
func chunkInfoSelection(oc *graphql.OperationContext, sel ast.SelectionSet) *selection {
	fields := graphql.CollectFields(oc, sel, isChunkInfo)
	s := &selection{typename: "ChunkInfo", fields: make([]selected, 0, len(fields))}
	for _, f := range fields {
		out := selected{alias: f.Alias, kind: chunkInfoFields[f.Name]}
		if out.kind == fieldInitialTransactionID {
			out.sub = objectSelection(oc, f.Selections, "TransactionId", isTransactionID, transactionIDFields)
		}
		s.fields = append(s.fields, out)
	}
	return s
}

// objectSelection is sel over an object whose fields are all scalars.
func objectSelection(oc *graphql.OperationContext, sel ast.SelectionSet, typename string, implementors []string, kinds map[string]fieldKind) *selection {
	fields := graphql.CollectFields(oc, sel, implementors)
	s := &selection{typename: typename, fields: make([]selected, 0, len(fields))}
	for _, f := range fields {
		s.fields = append(s.fields, selected{alias: f.Alias, kind: kinds[f.Name]})
	}
	return s
}

// encodingArg is `message`'s encoding as the generated code reads it: the
// argument (a literal or a variable, validated against the enum before
// execution), the schema's default when it is absent, nil when null.
func encodingArg(oc *graphql.OperationContext, f *ast.Field) *MessageEncoding {
	var vars map[string]any
	if oc != nil {
		vars = oc.Variables
	}
	v, ok := f.ArgumentMap(vars)["encoding"]
	if !ok || v == nil {
		return nil
	}
	s, err := graphql.UnmarshalString(v)
	if err != nil {
		return nil
	}
	e := MessageEncoding(s)
	return &e
}

// writeMessage writes row m's fields of s.
func (s *selection) writeMessage(w io.Writer, m *model.TopicMessage) {
	v := TopicMessage{Row: m}
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldTopicID:
			v.TopicID().MarshalGQL(w)
		case fieldSequenceNumber:
			v.SequenceNumber().MarshalGQL(w)
		case fieldConsensusTimestamp:
			v.ConsensusTimestamp().MarshalGQL(w)
		case fieldMessage:
			t := Text{Bytes: m.Message, Encoding: f.encoding}
			t.MarshalGQL(w)
		case fieldPayerAccountID:
			marshalOrNull(w, v.PayerAccountID())
		case fieldRunningHash:
			v.RunningHash().MarshalGQL(w)
		case fieldRunningHashVersion:
			v.RunningHashVersion().MarshalGQL(w)
		case fieldChunkInfo:
			if c := v.ChunkInfo(); c != nil {
				f.sub.writeChunkInfo(w, c)
			} else {
				io.WriteString(w, "null") //nolint:errcheck
			}
		}
	})
}

func (s *selection) writeChunkInfo(w io.Writer, c *ChunkInfo) {
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldNumber:
			c.Number().MarshalGQL(w)
		case fieldTotal:
			marshalOrNull(w, c.Total())
		case fieldInitialTransactionID:
			f.sub.writeTransactionID(w, c.InitialTransactionID())
		}
	})
}

func (s *selection) writeTransactionID(w io.Writer, t *TransactionID) {
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldAccountID:
			marshalOrNull(w, t.AccountID())
		case fieldNonce:
			marshalOrNull(w, t.Nonce())
		case fieldScheduled:
			marshalOrNull(w, t.Scheduled())
		case fieldValidStart:
			marshalOrNull(w, t.TransactionValidStart())
		}
	})
}

// write writes the object of s: each field's key, then its value, which
// value writes (__typename aside).
func (s *selection) write(w io.Writer, value func(f *selected)) {
	io.WriteString(w, "{") //nolint:errcheck // gqlgen's marshalers do not report write errors either
	for i := range s.fields {
		f := &s.fields[i]
		writeKey(w, i, f.alias)
		if f.kind == fieldTypename {
			writeTypename(w, s.typename)
			continue
		}
		value(f)
	}
	io.WriteString(w, "}") //nolint:errcheck
}

// writeList writes a JSON array of n elements, element i written by
// element. Into the executor's response buffer, the room for the rest is
// made once, after the first element: what it took, less its own varying
// bytes (vary: the part of an element that depends on its row's data), plus
// each other element's varying bytes. A page of 100 messages is some 64 KB,
// and the buffer doubling its way there allocated about twice that again
// (bench/handler's B/op). The room is ctx's lender's when it has one
// (room.go).
func writeList(ctx context.Context, w io.Writer, n int, element func(i int), vary func(i int) int) {
	io.WriteString(w, "[") //nolint:errcheck
	buf, _ := w.(*bytes.Buffer)
	for i := range n {
		if i > 0 {
			io.WriteString(w, ",") //nolint:errcheck
		}
		if i > 0 || buf == nil || n == 1 {
			element(i)
			continue
		}
		start := buf.Len()
		element(0)
		fixed := buf.Len() - start - vary(0) + 1 // and its comma
		room := 16
		for j := 1; j < n; j++ {
			room += max(fixed, 0) + vary(j)
		}
		makeRoom(ctx, buf, room)
	}
	io.WriteString(w, "]") //nolint:errcheck
}

// varBytes are the bytes of row m's data that s writes beyond what every row
// takes: its message's text, as base64 (a UTF-8 rendering is shorter, or
// escaped; the estimate only sizes a buffer).
func (s *selection) varBytes(m *model.TopicMessage) int {
	n := 0
	for i := range s.fields {
		if s.fields[i].kind == fieldMessage {
			n += base64.StdEncoding.EncodedLen(len(m.Message))
		}
	}
	return n
}

// writeKey writes `"alias":`, after a comma unless it is the first field. An
// alias is a GraphQL name, which JSON needs no escape for.
func writeKey(w io.Writer, i int, alias string) {
	if i > 0 {
		io.WriteString(w, `,"`) //nolint:errcheck
	} else {
		io.WriteString(w, `"`) //nolint:errcheck
	}
	io.WriteString(w, alias) //nolint:errcheck
	io.WriteString(w, `":`)  //nolint:errcheck
}

func writeTypename(w io.Writer, name string) {
	io.WriteString(w, `"`)  //nolint:errcheck
	io.WriteString(w, name) //nolint:errcheck
	io.WriteString(w, `"`)  //nolint:errcheck
}

// marshalOrNull writes v, or null when it is nil (a NULL column).
func marshalOrNull[P interface {
	*T
	graphql.Marshaler
}, T any](w io.Writer, v P) {
	if v == nil {
		io.WriteString(w, "null") //nolint:errcheck
		return
	}
	v.MarshalGQL(w)
}

// selectionOf is the selection set of the field being written, the one
// gqlgen's generated marshalers are given: the field context's, or for an
// element of a list (a context holding only its index) the list field's.
func selectionOf(ctx context.Context) ast.SelectionSet {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.Index == nil {
			return fc.Field.Selections
		}
	}
	return nil
}

// Selection is the selection of a message compiled once, for an operation
// answered without gqlgen's executor (graph's compiled operations).
type Selection struct{ s *selection }

// CompileMessage compiles sel over a TopicMessage when nothing in it
// depends on the operation's variables or needs the executor: fields only
// (no fragment, no directive), each response key once, every field one of
// the row's, `message`'s encoding a literal or absent. ok is false
// otherwise.
func CompileMessage(sel ast.SelectionSet) (compiled Selection, ok bool) {
	s, ok := compile(sel, "TopicMessage", messageFields)
	return Selection{s}, ok
}

// WriteMessage writes the message's fields of the selection.
func (c Selection) WriteMessage(w io.Writer, m *TopicMessage) { c.s.writeMessage(w, m.Row) }

func compile(sel ast.SelectionSet, typename string, kinds map[string]fieldKind) (*selection, bool) {
	s := &selection{typename: typename}
	seen := map[string]bool{}
	for _, node := range sel {
		f, isField := node.(*ast.Field)
		if !isField || len(f.Directives) > 0 || seen[f.Alias] || f.Definition == nil {
			return nil, false
		}
		seen[f.Alias] = true
		kind, known := kinds[f.Name]
		if !known {
			return nil, false
		}
		out := selected{alias: f.Alias, kind: kind}
		var ok bool
		switch kind {
		case fieldMessage:
			out.encoding, ok = literalEncoding(f)
		case fieldChunkInfo:
			out.sub, ok = compile(f.SelectionSet, "ChunkInfo", chunkInfoFields)
		case fieldInitialTransactionID:
			out.sub, ok = compile(f.SelectionSet, "TransactionId", transactionIDFields)
		default:
			ok = len(f.Arguments) == 0 && len(f.SelectionSet) == 0
		}
		if !ok {
			return nil, false
		}
		s.fields = append(s.fields, out)
	}
	return s, len(s.fields) > 0
}

// literalEncoding is `message`'s encoding when it is written as an enum
// value or null, or left out (the schema's default).
func literalEncoding(f *ast.Field) (*MessageEncoding, bool) {
	if len(f.SelectionSet) > 0 || len(f.Arguments) > 1 {
		return nil, false
	}
	if len(f.Arguments) == 0 {
		return encodingArg(nil, f), true
	}
	switch a := f.Arguments[0]; {
	case a.Name != "encoding" || a.Value == nil:
		return nil, false
	case a.Value.Kind == ast.NullValue:
		return nil, true
	case a.Value.Kind == ast.EnumValue:
		e := MessageEncoding(a.Value.Raw)
		return &e, true
	}
	return nil, false
}
