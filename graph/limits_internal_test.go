package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/app"
)

// TestOperationCost pins the complexity formula of operationGuard.
func TestOperationCost(t *testing.T) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	g := operationGuard{maxDepth: 10, maxCost: 200, sizes: app.PageSizes{Default: 25, Max: 100}}
	tests := []struct {
		name        string
		query       string
		depth, cost int
	}{
		{"one object", `{ topic(id: "1") { id memo } }`, 2, 1},
		{"values of the row are free", `{ topic(id: "1") { adminKey { key } customFees { fixedFees { amount } } timestamp { from } } }`, 4, 1},
		{"a connection: first × node", `{ topicMessages(topicId: "1", first: 10) { nodes { sequenceNumber } } }`, 3, 10},
		{"default first", `{ topicMessages(topicId: "1") { nodes { sequenceNumber } } }`, 3, 25},
		{"first is capped", `{ topicMessages(topicId: "1", first: 1000) { nodes { sequenceNumber } } }`, 3, 100},
		{"an invalid first counts 1", `{ topicMessages(topicId: "1", first: -5) { nodes { sequenceNumber } } }`, 3, 1},
		{"pageInfo alone still costs first", `{ topicMessages(topicId: "1", first: 7) { pageInfo { hasNextPage } } }`, 3, 7},
		{"edges cost their node", `{ topicMessages(topicId: "1", first: 10) { edges { cursor node { sequenceNumber } } pageInfo { endCursor } } }`, 4, 10},
		{"100 messages with their topics", `{ topicMessages(topicId: "1", first: 100) { nodes { topic { id } } } }`, 4, 200},
		{"100 schedules with signatures", `{ schedules(first: 100) { nodes { signatures { type } } } }`, 4, 100},
		{"chunks and fullMessage", `{ topicMessages(topicId: "1", first: 10) { nodes { chunks { sequenceNumber } fullMessage } } }`, 4, 30},
		{"nested connections multiply", `{ topics(first: 25) { nodes { messages(first: 25) { nodes { sequenceNumber } } } } }`, 5, 650},
		{"variables", `query($n: Int) { topics(first: $n) { nodes { id } } }`, 3, 3},
		{"aliases add", `{ a: topic(id: "1") { id } b: topic(id: "2") { message(sequenceNumber: 1) { topic { id } } } }`, 4, 4},
		{"fragments", `{ ...Q ...Q } fragment Q on Query { topic(id: "1") { ...T } } fragment T on Topic { id message(sequenceNumber: 1) { sequenceNumber } }`, 3, 4},
		{"introspection is free", `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } __typename }`, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tc.query)
			if errs != nil {
				t.Fatalf("invalid query: %v", errs)
			}
			m := measurer{guard: g, vars: map[string]any{"n": int64(3)}, fragments: map[string]measure{}}
			got := m.selectionSet(doc.Operations[0].SelectionSet)
			if got.depth != tc.depth || got.cost != tc.cost {
				t.Errorf("depth %d cost %d, want depth %d cost %d", got.depth, got.cost, tc.depth, tc.cost)
			}
		})
	}
}

func TestCursor(t *testing.T) {
	c := encodeCursor(cursorMessage, 1234567890000000001)
	var errs argErrors
	if key, ok := afterCursor(&c, cursorMessage, &errs); !ok || key != 1234567890000000001 || len(errs) > 0 {
		t.Errorf("round trip: %d %v %v", key, ok, errs)
	}
	for _, bad := range []string{"", "!", c + "x", encodeCursor(cursorSchedule, 5), "dG06", "dG06eA"} {
		errs = nil
		if _, ok := afterCursor(&bad, cursorMessage, &errs); ok || len(errs) != 1 || errs[0] != "Invalid parameter: after" {
			t.Errorf("%q: accepted or wrong message %v", bad, errs)
		}
	}
}

// TestOperationMeasuredOnce: the guard measures an operation once and keeps
// the measure by its text, unless a variable gave an argument it counts,
// whose value may change the verdict from one request to the next.
func TestOperationMeasuredOnce(t *testing.T) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	g := newOperationGuard(10, 200, app.PageSizes{Default: 25, Max: 100})
	verdict := func(query string, vars map[string]any) *gqlerror.Error {
		doc, errs := gqlparser.LoadQuery(schema, query)
		if errs != nil {
			t.Fatalf("invalid query: %v", errs)
		}
		oc := &graphql.OperationContext{RawQuery: query, Doc: doc, Variables: vars}
		return g.MutateOperationContext(t.Context(), oc)
	}
	fixed := `{ topicMessages(topicId: "1", first: 10) { nodes { sequenceNumber } } }`
	if verdict(fixed, nil) != nil || g.measured.Len() != 1 {
		t.Fatalf("a fixed operation: kept %d measures, want 1", g.measured.Len())
	}
	if m, _ := g.measured.Get(measureKey{query: fixed}); m != (measure{depth: 3, cost: 10}) {
		t.Errorf("kept %+v", m)
	}
	// What is kept is what answers: a measure planted under the text is
	// the verdict given for it.
	g.measured.Add(measureKey{query: fixed}, measure{depth: 3, cost: 1000})
	if err := verdict(fixed, nil); err == nil || err.Extensions["code"] != CodeComplexityLimit {
		t.Errorf("the kept measure was not used: %v", err)
	}

	byVariable := `query($n: Int) { topicMessages(topicId: "1", first: $n) { nodes { topic { id } chunks { sequenceNumber } } } }`
	if err := verdict(byVariable, map[string]any{"n": int64(10)}); err != nil {
		t.Errorf("first 10: %v", err)
	}
	if err := verdict(byVariable, map[string]any{"n": int64(100)}); err == nil {
		t.Errorf("first 100 with topics and chunks (cost 300) was let through")
	}
	if g.measured.Contains(measureKey{query: byVariable}) {
		t.Errorf("an operation whose cost depends on its variables was kept")
	}
}
