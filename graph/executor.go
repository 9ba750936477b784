package graph

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"mirrorql/graph/view"
)

// requestExecutor is gqlgen's generated executor of messages and their
// edges, for the selections the views hand back (view.Executor,
// view/render.go), in one request.
type requestExecutor struct {
	schema *executableSchema
	// deferred: a selection it ran deferred a fragment, which the
	// operation's response says (deferredUnderViews).
	deferred atomic.Bool
}

// ExecMessage resolves the message's selection as the executor would where
// the view is written: in the operation and field context of ctx. The
// execution context is the operation's state as generated code holds it; a
// fragment deferred under it (no transport here delivers one) is left null
// and ends with the request, as the executor's own.
func (e *requestExecutor) ExecMessage(ctx context.Context, sel ast.SelectionSet, m *view.TopicMessage) graphql.Marshaler {
	ec := newExecutionContext(graphql.GetOperationContext(ctx), e.schema, nil)
	defer e.noteDeferred(ec)
	return ec._TopicMessage(ctx, sel, m)
}

// ExecEdge is ExecMessage for an edge of the message with its cursor.
func (e *requestExecutor) ExecEdge(ctx context.Context, sel ast.SelectionSet, cursor string, m *view.TopicMessage) graphql.Marshaler {
	ec := newExecutionContext(graphql.GetOperationContext(ctx), e.schema, nil)
	defer e.noteDeferred(ec)
	return ec._TopicMessageEdge(ctx, sel, &TopicMessageEdge{Cursor: cursor, Node: m})
}

// ExecSchedule is ExecMessage for a schedule.
func (e *requestExecutor) ExecSchedule(ctx context.Context, sel ast.SelectionSet, s *view.Schedule) graphql.Marshaler {
	ec := newExecutionContext(graphql.GetOperationContext(ctx), e.schema, nil)
	defer e.noteDeferred(ec)
	return ec._Schedule(ctx, sel, s)
}

// ExecScheduleEdge is ExecEdge for a schedule.
func (e *requestExecutor) ExecScheduleEdge(ctx context.Context, sel ast.SelectionSet, cursor string, s *view.Schedule) graphql.Marshaler {
	ec := newExecutionContext(graphql.GetOperationContext(ctx), e.schema, nil)
	defer e.noteDeferred(ec)
	return ec._ScheduleEdge(ctx, sel, &ScheduleEdge{Cursor: cursor, Node: s})
}

func (e *requestExecutor) noteDeferred(ec *executionContext) {
	if atomic.LoadInt32(&ec.Deferred) > 0 {
		e.deferred.Store(true)
	}
}

// withExecutor gives every request the generated executor of messages; with
// fieldByField it writes every message (Options.FieldByField).
func withExecutor(schema graphql.ExecutableSchema, fieldByField bool, next http.Handler) http.Handler {
	s := schema.(*executableSchema)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := &requestExecutor{schema: s}
		next.ServeHTTP(w, r.WithContext(view.WithExecutor(r.Context(), e, fieldByField)))
	})
}

// deferredUnderViews marks a query's response as gqlgen's executor marks
// one whose selection deferred a fragment (hasNext: true, though no
// transport here sends what follows) when the fragment was deferred under
// a message the views handed back.
type deferredUnderViews struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = deferredUnderViews{}

func (deferredUnderViews) ExtensionName() string                   { return "DeferredUnderViews" }
func (deferredUnderViews) Validate(graphql.ExecutableSchema) error { return nil }

func (deferredUnderViews) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) || graphql.GetOperationContext(ctx).Operation == nil ||
		graphql.GetOperationContext(ctx).Operation.Operation != ast.Query {
		return resp
	}
	if e, ok := view.ExecutorOf(ctx).(*requestExecutor); ok && e.deferred.Load() && resp.HasNext == nil {
		hasNext := true
		resp.HasNext = &hasNext
	}
	return resp
}
