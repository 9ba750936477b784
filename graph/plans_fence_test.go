package graph

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"mirrorql/app"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

// The compiled operations' fences: what they must not do silently.

// TestPlansAnswerDatabaseErrors: a lookup that fails on the database is
// answered by the plan with gqlgen's bytes, after one statement, not handed
// to gqlgen to run the same lookup again. The database error is made by
// renaming topic_message, which on the v2 layout its partitions survive
// (they are read by their own names): v1, whatever the test layout.
func TestPlansAnswerDatabaseErrors(t *testing.T) {
	t.Parallel()
	d, o := fixtureDBLayout(t, testdb.LayoutV1)
	stmts := &stmtlog.Log{}
	d.Record(stmts)
	plain, compiled := newAPI(app.New(d, app.Rules{}), o, false, nil), newAPI(app.New(d, app.Rules{}), o, true, nil)
	bodies := []string{
		`{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { sequenceNumber message } }","variables":{"t":"0.0.7","s":1}}`,
		`{"query":"{ a: topicMessageByTimestamp(consensusTimestamp: \"1.000000001\") { sequenceNumber }\n  b: topicMessage(topicId: \"7\", sequenceNumber: 2) { sequenceNumber } }"}`,
	}
	for _, body := range bodies {
		post(t, compiled, body, "") // learnt while the database answers
	}
	if _, err := d.Bun().ExecContext(context.Background(), "ALTER TABLE topic_message RENAME TO topic_message_gone"); err != nil {
		t.Fatal(err)
	}
	for _, body := range bodies {
		want := post(t, plain, body, "")
		stmts.Take()
		got := post(t, compiled, body, "")
		sent := stmts.Take()
		if got.Code != want.Code || !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) ||
			!sameAnswer(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("compiled %d %s\ngqlgen   %d %s", got.Code, got.Body, want.Code, want.Body)
		}
		if !strings.Contains(got.Body.String(), `"Service unavailable"`) {
			t.Errorf("answer %s", got.Body)
		}
		if roots := strings.Count(body, "topicMessage"); len(sent) != roots {
			t.Errorf("%d statements for %d lookups: the failed lookups ran again", len(sent), roots)
		}
	}
}

// TestPlansPanicIsLoggedAndCounted: a panic on the plan path leaves the
// request to gqlgen, and says so.
func TestPlansPanicIsLoggedAndCounted(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var panics atomic.Int64
	o := Options{Log: slog.New(slog.NewTextHandler(&logs, nil)), OnPlanPanic: func() { panics.Add(1) }}
	api := newAPI(app.New(nil, app.Rules{}), o, true, nil) // no store: every lookup panics
	body := `{"query":"{ topicMessage(topicId: \"7\", sequenceNumber: 1) { sequenceNumber } }"}`
	post(t, api, body, "") // gqlgen answers and the plan is learnt
	got := post(t, api, body, "")
	if got.Code != http.StatusOK || !strings.Contains(got.Body.String(), `"Internal error"`) {
		t.Errorf("answer %d %s", got.Code, got.Body)
	}
	if panics.Load() != 1 || !strings.Contains(logs.String(), "panic in a compiled operation") {
		t.Errorf("%d panics counted; log:\n%s", panics.Load(), logs.String())
	}
}

// TestPlansAccountForEveryExtension: the plans answer ahead of gqlgen's
// executor, so an extension added to it (srv.Use, AroundOperations, …)
// would be bypassed for the compiled operations. Each extension the server
// has must be listed here with why the plans may skip it; a new one fails
// this test until the plans honour it (or stop answering).
func TestPlansAccountForEveryExtension(t *testing.T) {
	t.Parallel()
	d, o := fixtureDB(t)
	api := newAPI(app.New(d, app.Rules{}), o, true, nil)
	accounted := map[string]string{
		"extension.Introspection": "introspection fields are outside the plans' subset",
		"extension.AutomaticPersistedQuery": "a request with extensions is left to gqlgen (plans.serve); one that sends its query " +
			"in full is answered as the plan of that text, as gqlgen would answer it",
		"graph.operationGuard": "the plans answer only operations the guard judged when they were learnt; their cost does not depend on the variables",
		"graph.streamLoaders":  "only streams (WebSocket, SSE), which the plans never answer",
		"graph.deferredUnderViews": "only a selection handed to gqlgen's executor under a view can defer a fragment; " +
			"the plans' subset has no fragment",
	}
	exec := reflect.ValueOf(api.srv).Elem().FieldByName("exec")
	if !exec.IsValid() || exec.IsNil() {
		t.Fatal("gqlgen's handler.Server has no exec field any more: look again at how to list its extensions")
	}
	exts := exec.Elem().FieldByName("extensions")
	if !exts.IsValid() {
		t.Fatal("gqlgen's executor has no extensions field any more: look again at how to list them")
	}
	for i := range exts.Len() {
		typ := exts.Index(i).Elem().Type()
		name := strings.TrimPrefix(typ.String(), "*")
		if _, ok := accounted[name]; !ok {
			t.Errorf("extension %s is not accounted for by the compiled operations (graph/plans.go)", name)
		}
	}
}
