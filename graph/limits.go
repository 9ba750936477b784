package graph

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/app"
	"mirrorql/model"
)

// Codes of the refusals of the operation guard; both are protocol errors
// (HTTP 422), raised before any resolver runs.
const (
	CodeDepthLimit      = "DEPTH_LIMIT_EXCEEDED"
	CodeComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"
)

func init() {
	errcode.RegisterErrorType(CodeDepthLimit, errcode.KindProtocol)
	errcode.RegisterErrorType(CodeComplexityLimit, errcode.KindProtocol)
}

// operationGuard is a gqlgen extension that measures the validated operation
// and refuses it when it is deeper than maxDepth or costs more than maxCost.
//
// Depth counts fields from the root (`{ topic(id: 1) { id } }` is 2).
// Cost counts the rows the query layer loads:
//
//	a Topic, TopicMessage or Schedule          1 + cost of its selection
//	a connection (type …Connection)            first × max(1, cost of its selection)
//	TopicMessage.fullMessage                   1 (it may load the chunks)
//	anything else (scalars, pageInfo, edges,   cost of its selection (0 for a scalar):
//	  keys, chunkInfo, signatures, fees, …)      it comes with its row
//
// where first is the argument (the default when null, capped at the maximum
// page size). So a node costs 1 plus what it loads: a page of 100 messages
// with their topics costs 100 × (1 + 1) = 200, 100 schedules with their
// signatures 100 × 1 = 100, and 25 topics with 25 messages each
// 25 × (1 + 25 × 1) = 650. Introspection (__schema, __type, __typename) is
// free and not counted in depth, so that explorers work. A fragment is
// measured once however often it is spread.
//
// gqlgen's complexity functions (extension.FixedComplexityLimit) cannot
// count this way: they ignore a field cost below 1, so every scalar, edge
// and pageInfo costs at least 1, they measure a fragment anew at each
// spread, and they know no depth; hence our own measure.
//
// An operation's measure is taken once: it is kept by query text and
// operation name (measured), unless a variable gave one of the arguments it
// counts (first, buckets), which may differ from one request to the next.
type operationGuard struct {
	maxDepth, maxCost int
	sizes             app.PageSizes
	measured          *lru.Cache[measureKey, measure] // nil: every request is measured
}

type measureKey struct{ query, operation string }

// newOperationGuard is the guard with its measures kept for the last 1,000
// operations, as many as gqlgen's parsed-query cache holds.
func newOperationGuard(maxDepth, maxCost int, sizes app.PageSizes) operationGuard {
	measured, _ := lru.New[measureKey, measure](1000) // only a size below 1 fails
	return operationGuard{maxDepth: maxDepth, maxCost: maxCost, sizes: sizes, measured: measured}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = operationGuard{}

func (operationGuard) ExtensionName() string                   { return "OperationGuard" }
func (operationGuard) Validate(graphql.ExecutableSchema) error { return nil }

func (g operationGuard) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	key := measureKey{opCtx.RawQuery, opCtx.OperationName}
	got, kept := measure{}, false
	if g.measured != nil {
		got, kept = g.measured.Get(key)
	}
	if !kept {
		m := measurer{guard: g, vars: opCtx.Variables, fragments: map[string]measure{}}
		got = m.selectionSet(op.SelectionSet)
		if g.measured != nil && !m.variable && opCtx.RawQuery != "" {
			g.measured.Add(key, got)
		}
	}
	if got.depth > g.maxDepth {
		err := gqlerror.Errorf("operation has depth %d, which exceeds the limit of %d", got.depth, g.maxDepth)
		errcode.Set(err, CodeDepthLimit)
		return err
	}
	if got.cost > g.maxCost {
		err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", got.cost, g.maxCost)
		errcode.Set(err, CodeComplexityLimit)
		return err
	}
	return nil
}

// loadedTypes are the object types that are rows of their own.
var loadedTypes = map[string]bool{"Topic": true, "TopicMessage": true, "Schedule": true}

type measure struct{ depth, cost int }

type measurer struct {
	guard     operationGuard
	vars      map[string]any
	fragments map[string]measure
	variable  bool // a variable gave an argument the measure counts
}

func (m *measurer) selectionSet(set ast.SelectionSet) measure {
	var out measure
	for _, sel := range set {
		var got measure
		switch s := sel.(type) {
		case *ast.Field:
			got = m.field(s)
		case *ast.InlineFragment:
			got = m.selectionSet(s.SelectionSet)
		case *ast.FragmentSpread:
			var seen bool
			if got, seen = m.fragments[s.Name]; !seen && s.Definition != nil {
				got = m.selectionSet(s.Definition.SelectionSet)
				m.fragments[s.Name] = got
			}
		}
		out.depth = max(out.depth, got.depth)
		out.cost = addCost(out.cost, got.cost)
	}
	return out
}

func (m *measurer) field(f *ast.Field) measure {
	if strings.HasPrefix(f.Name, "__") || f.Definition == nil {
		return measure{}
	}
	child := m.selectionSet(f.SelectionSet)
	out := measure{depth: child.depth + 1}
	switch typeName := f.Definition.Type.Name(); {
	case strings.HasSuffix(typeName, "Connection"):
		out.cost = mulCost(m.first(f), max(1, child.cost))
	case loadedTypes[typeName]:
		out.cost = addCost(1, child.cost)
	case f.Name == "fullMessage":
		out.cost = 1
	case typeName == "ActivityBucket":
		out.cost = m.buckets(f)
	default:
		out.cost = child.cost
	}
	return out
}

// first is the page size a connection field will use: app's rule, as the
// resolver applies it (app.PageSizes.Estimate).
func (m *measurer) first(f *ast.Field) int {
	n, ok := m.intArg(f, "first")
	if !ok {
		return m.guard.sizes.Estimate(nil)
	}
	return m.guard.sizes.Estimate(&n)
}

// buckets is what Topic.activity costs: its buckets, as many as the
// resolver allows.
func (m *measurer) buckets(f *ast.Field) int {
	n, ok := m.intArg(f, "buckets")
	if !ok {
		return model.MaxBuckets
	}
	return int(min(max(n, 1), model.MaxBuckets))
}

// intArg is an Int argument's value; false when absent or null, and the
// largest value for one of an unexpected type.
func (m *measurer) intArg(f *ast.Field, name string) (int64, bool) {
	if a := f.Arguments.ForName(name); a != nil && a.Value != nil && a.Value.Kind == ast.Variable {
		m.variable = true
	}
	v, ok := f.ArgumentMap(m.vars)[name]
	if !ok || v == nil {
		return 0, false
	}
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case json.Number:
		n, _ := v.Int64()
		return n, true
	}
	return math.MaxInt32, true
}

func addCost(a, b int) int {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}

func mulCost(a, b int) int {
	if a != 0 && b > math.MaxInt32/a {
		return math.MaxInt32
	}
	return a * b
}
