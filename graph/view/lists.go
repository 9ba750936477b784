package view

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"mirrorql/model"
)

// listWorkers bounds the goroutines of a list whose selection loads, as
// gqlgen's worker_limit did for every list: the loaders start a page's
// nested loads from its first node (graph/loaders.go), so a few workers lose
// no batching.
const listWorkers = 4

// MarshalGQLContext writes the message for the selection being written
// (render.go).
func (m TopicMessage) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := m.Selection
	if sel == nil {
		sel = selectionOf(ctx)
	}
	e := executorOf(ctx)
	s, loads := messageSelection(graphql.GetOperationContext(ctx), sel)
	if loads || e.always {
		e.ExecMessage(ctx, sel, &m).MarshalGQL(w)
		return nil
	}
	s.writeMessage(w, m.Row)
	return nil
}

// Messages are a list of messages (TopicMessageConnection.nodes): the rows
// shown, and the page of siblings their loads start from (nil: the rows).
type Messages struct {
	Rows []model.TopicMessage
	Page *Page[model.TopicMessage]
}

// MarshalGQLContext writes the rows in one pass when the selection is
// their row; else each through gqlgen's executor.
func (l *Messages) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := selectionOf(ctx)
	e := executorOf(ctx)
	s, loads := messageSelection(graphql.GetOperationContext(ctx), sel)
	if loads || e.always {
		l.executed(ctx, func(ctx context.Context, m *TopicMessage) graphql.Marshaler {
			return e.ExecMessage(ctx, sel, m)
		}).MarshalGQL(w)
		return nil
	}
	writeList(ctx, w, len(l.Rows), func(i int) { s.writeMessage(w, &l.Rows[i]) },
		func(i int) int { return s.varBytes(&l.Rows[i]) })
	return nil
}

// executed marshals each row with element, side by side as gqlgen's
// generated code marshals a list (each element's field context carries its
// index, for the paths of errors).
func (l *Messages) executed(ctx context.Context, element func(context.Context, *TopicMessage) graphql.Marshaler) graphql.Marshaler {
	page := l.Page
	if page == nil {
		page = &Page[model.TopicMessage]{Rows: l.Rows}
	}
	views := make([]TopicMessage, len(l.Rows))
	for i := range views {
		views[i] = TopicMessage{Row: &l.Rows[i], Page: page}
	}
	return graphql.MarshalSliceConcurrently(ctx, len(views), listWorkers, false, func(ctx context.Context, i int) graphql.Marshaler {
		graphql.GetFieldContext(ctx).Result = &views[i]
		return element(ctx, &views[i])
	})
}

// MessageEdges are a list of edges (TopicMessageConnection.edges): each
// row's cursor and the row as its node.
type MessageEdges struct {
	Messages
	// AppendCursor appends the cursor of a row to b.
	AppendCursor func(b []byte, m *model.TopicMessage) []byte
}

// MarshalGQLContext writes the edges in one pass when every node's
// selection is its row; else each edge through gqlgen's executor.
func (l *MessageEdges) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := selectionOf(ctx)
	e := executorOf(ctx)
	oc := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFields(oc, sel, isMessageEdge)
	nodes := make([]*selection, len(fields)) // by field: a node's selection
	loads := e.always
	for i := range fields {
		if fields[i].Name == "node" {
			var l bool
			nodes[i], l = messageSelection(oc, fields[i].Selections)
			loads = loads || l
		}
	}
	if loads {
		l.executed(ctx, func(ctx context.Context, m *TopicMessage) graphql.Marshaler {
			cursor := string(l.AppendCursor(nil, m.Row))
			return e.ExecEdge(ctx, sel, cursor, m)
		}).MarshalGQL(w)
		return nil
	}
	writeEdges(ctx, w, "TopicMessageEdge", fields, nodes, len(l.Rows),
		func(r int) {
			// A cursor is unpadded URL-safe base64: nothing to escape.
			b := append(spare(w, 40), '"')
			write(w, append(l.AppendCursor(b, &l.Rows[r]), '"'))
		},
		func(s *selection, r int) { s.writeMessage(w, &l.Rows[r]) },
		func(s *selection, r int) int { return s.varBytes(&l.Rows[r]) })
	return nil
}

// writeEdges writes a list of n edges of type typename, each with the
// fields collected: its cursor (cursor writes row r's) and its node under
// that field's selection in nodes (node writes row r's; vary, the bytes of
// its data that vary, for writeList).
func writeEdges(ctx context.Context, w io.Writer, typename string, fields []graphql.CollectedField, nodes []*selection, n int,
	cursor func(r int), node func(s *selection, r int), vary func(s *selection, r int) int) {
	writeList(ctx, w, n, func(r int) {
		io.WriteString(w, "{") //nolint:errcheck
		for i := range fields {
			f := &fields[i]
			writeKey(w, i, f.Alias)
			switch f.Name {
			case "__typename":
				writeTypename(w, typename)
			case "cursor":
				cursor(r)
			case "node":
				node(nodes[i], r)
			}
		}
		io.WriteString(w, "}") //nolint:errcheck
	}, func(r int) int {
		v := 0
		for _, s := range nodes {
			if s != nil {
				v += vary(s, r)
			}
		}
		return v
	})
}

// The lists are output values only, like the scalars.
func (TopicMessage) UnmarshalGQLContext(context.Context, any) error  { return errOutputOnly }
func (*Messages) UnmarshalGQLContext(context.Context, any) error     { return errOutputOnly }
func (*MessageEdges) UnmarshalGQLContext(context.Context, any) error { return errOutputOnly }
