package graph_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/graph"
)

// post sends a body to the handler as a client would and returns the status,
// the decoded answer and how long it took.
func (e *env) post(t *testing.T, body io.Reader, contentLength int64) (int, result, time.Duration) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/graphql", body)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = contentLength
	return e.serve(t, req)
}

func (e *env) serve(t *testing.T, req *http.Request) (int, result, time.Duration) {
	t.Helper()
	rec := httptest.NewRecorder()
	start := time.Now()
	e.handler.ServeHTTP(rec, req)
	took := time.Since(start)
	var r result
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("status %d, body is not JSON: %.300s", rec.Code, rec.Body.String())
	}
	return rec.Code, r, took
}

func queryBody(q string) string {
	b, _ := json.Marshal(map[string]any{"query": q})
	return string(b)
}

// TestLimits: deep, costly, long and oversized requests are refused before
// any statement runs, quickly and with a clear error; requests at the limits
// pass.
func TestLimits(t *testing.T) {
	e := newEnv(t, fixtureSQL, graph.Options{})
	nest := func(levels int, leaf string) string {
		// topicMessage { topic { message { topic { … leaf } } } }: one level a field
		q := leaf
		for i := levels - 1; i >= 1; i-- {
			switch {
			case i == 1:
				q = `topicMessage(topicId: "7", sequenceNumber: 1) { ` + q + ` }`
			case i%2 == 0:
				q = `topic { ` + q + ` }`
			default:
				q = `message(sequenceNumber: 1) { ` + q + ` }`
			}
		}
		return "{ " + q + " }"
	}
	var aliases strings.Builder
	for i := 0; i < 340; i++ { // 3 tokens each
		aliases.WriteString(" a" + itoa(i) + ": __typename")
	}
	// each fragment spreads the next twice: 2^20 expansions if walked naively
	var bomb strings.Builder
	bomb.WriteString(`{ ...F0 } `)
	for i := 0; i < 20; i++ {
		bomb.WriteString("fragment F" + itoa(i) + " on Query { ...F" + itoa(i+1) + " ...F" + itoa(i+1) + " } ")
	}
	bomb.WriteString(`fragment F20 on Query { topic(id: "7") { id } }`)

	// A refusal is a request error: 200 with the errors to a client that
	// accepts application/json (requesterrors.go), as this one does.
	tests := []struct {
		name   string
		query  string
		status int
		code   string
		msg    string
	}{
		{"depth 10 passes", nest(10, "sequenceNumber"), 200, "", ""},
		{"depth 11 is refused", nest(10, "topic { id }"), 200, graph.CodeDepthLimit, "operation has depth 11, which exceeds the limit of 10"},
		{"complexity 200 passes", `{ topicMessages(topicId: "7", first: 100) { nodes { topic { id } } } }`, 200, "", ""},
		{"complexity 300 is refused", `{ topicMessages(topicId: "7", first: 100) { nodes { topic { id } chunks { sequenceNumber } } } }`, 200,
			graph.CodeComplexityLimit, "operation has complexity 300, which exceeds the limit of 200"},
		{"nested connections are refused", `{ topics(first: 25) { nodes { messages(first: 25) { nodes { sequenceNumber } } } } }`, 200,
			graph.CodeComplexityLimit, "operation has complexity 650, which exceeds the limit of 200"},
		{"aliases add up", `{ a: schedules(first: 100) { nodes { id } } b: schedules(first: 100) { nodes { id } } c: schedule(id: "1") { id } }`, 200,
			graph.CodeComplexityLimit, "operation has complexity 201, which exceeds the limit of 200"},
		{"activity costs its buckets", `{ topic(id: "7") { activity(from: "1", to: "2", buckets: 199) { from to messages } } }`, 200, "", ""},
		{"activity over the limit is refused", `{ topic(id: "7") { activity(from: "1", to: "2", buckets: 200) { messages } } }`, 200,
			graph.CodeComplexityLimit, "operation has complexity 201, which exceeds the limit of 200"},
		{"more than 1000 tokens are refused", "{" + aliases.String() + " }", 200, "GRAPHQL_PARSE_FAILED", "exceeded token limit of 1000"},
		{"fragment fan-out is measured, once per fragment", bomb.String(), 200, graph.CodeComplexityLimit,
			"operation has complexity 1048576, which exceeds the limit of 200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := int64(e.stmts.Len())
			status, r, took := e.post(t, strings.NewReader(queryBody(tc.query)), -1)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %+v", status, tc.status, r.Errors)
			}
			if tc.code == "" {
				if len(r.Errors) > 0 {
					t.Fatalf("errors: %+v", r.Errors)
				}
				return
			}
			if len(r.Errors) != 1 || r.Errors[0].Message != tc.msg || r.Errors[0].Extensions["code"] != tc.code {
				t.Errorf("errors %+v, want %q (%s)", r.Errors, tc.msg, tc.code)
			}
			if n := int64(e.stmts.Len()) - before; n != 0 {
				t.Errorf("%d statements ran for a refused operation", n)
			}
			if took > time.Second {
				t.Errorf("refusal took %v", took)
			}
		})
	}

	t.Run("a body over 64 KiB is refused before it is read", func(t *testing.T) {
		big := queryBody("{ topic(id: \"7\") { id } }" + strings.Repeat(" ", 64<<10))
		for _, length := range []int64{int64(len(big)), -1} { // declared, and chunked
			status, r, took := e.post(t, strings.NewReader(big), length)
			if status != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "REQUEST_TOO_LARGE" ||
				r.Errors[0].Message != "the request body is larger than 65536 bytes" {
				t.Errorf("length %d: %d %+v", length, status, r.Errors)
			}
			if took > time.Second {
				t.Errorf("refusal took %v", took)
			}
		}
		// just under the limit is served
		ok := queryBody(`{ topic(id: "7") { id } }` + strings.Repeat(" ", 64<<10-60))
		if status, r, _ := e.post(t, strings.NewReader(ok), int64(len(ok))); status != 200 || len(r.Errors) > 0 {
			t.Errorf("%d bytes: %d %+v", len(ok), status, r.Errors)
		}
	})

	t.Run("a GET query string over 64 KiB is refused", func(t *testing.T) {
		q := `{ topic(id: "7") { id } }` + strings.Repeat(" ", 64<<10)
		req := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(q), nil)
		status, r, _ := e.serve(t, req)
		if status != http.StatusRequestURITooLong || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "REQUEST_TOO_LARGE" {
			t.Errorf("%d %+v", status, r.Errors)
		}
	})
}

// TestTransports: GET with a query parameter, POST with a JSON body and an
// operation name, introspection (the explorer's query), and GET from a
// browser gets the explorer.
func TestTransports(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	req := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`query Q($id: EntityId!) { topic(id: $id) { memo } }`)+
		"&variables="+url.QueryEscape(`{"id": "7"}`), nil)
	req.Header.Set("Accept", "application/json")
	if status, r, _ := e.serve(t, req); status != 200 || len(r.Errors) > 0 || r.Data.(map[string]any)["topic"].(map[string]any)["memo"] != "topic seven" {
		t.Errorf("GET: %d %+v %v", status, r.Errors, r.Data)
	}

	body := `{"query": "query A { topic(id: \"7\") { id } } query B { topic(id: \"8\") { id } }", "operationName": "B"}`
	if status, r, _ := e.post(t, strings.NewReader(body), int64(len(body))); status != 200 || len(r.Errors) > 0 ||
		r.Data.(map[string]any)["topic"].(map[string]any)["id"] != "0.0.8" {
		t.Errorf("POST: %d %+v %v", status, r.Errors, r.Data)
	}

	status, r, _ := e.post(t, strings.NewReader(queryBody(introspectionQuery)), -1)
	if status != 200 || len(r.Errors) > 0 {
		t.Fatalf("introspection: %d %+v", status, r.Errors)
	}
	types := r.Data.(map[string]any)["__schema"].(map[string]any)["types"].([]any)
	found := map[string]string{}
	for _, ty := range types {
		m := ty.(map[string]any)
		desc, _ := m["description"].(string)
		found[m["name"].(string)] = desc
	}
	for _, name := range []string{"Topic", "TopicMessage", "Schedule", "EntityId", "Timestamp", "Long", "TopicMessageConnection"} {
		if _, ok := found[name]; !ok {
			t.Errorf("introspection lacks %s", name)
		}
	}
	if !strings.Contains(found["EntityId"], "shard.realm.num") {
		t.Errorf("EntityId description %q", found["EntityId"])
	}

	req = httptest.NewRequest(http.MethodGet, "/graphql", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(rec.Body.String(), `data-endpoint="/graphql"`) {
		t.Errorf("explorer: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, asset := range []string{"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js", "explorer.js", "LICENSE.graphiql"} {
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/graphql/explorer/"+asset, nil))
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("%s: %d", asset, rec.Code)
		}
	}
	rec = httptest.NewRecorder()
	e.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/graphql/explorer/../../etc/passwd", nil))
	if rec.Code != 404 {
		t.Errorf("path escape: %d", rec.Code)
	}
}

func itoa(i int) string { return sprintf("%d", i) }

// introspectionQuery is graphql-js's getIntrospectionQuery({inputValueDeprecation: true,
// schemaDescription: true}), what GraphiQL sends to build its docs.
const introspectionQuery = `
    query IntrospectionQuery {
      __schema {
        description
        queryType { name kind }
        mutationType { name kind }
        subscriptionType { name kind }
        types {
          ...FullType
        }
        directives {
          name
          description
          
          
          
          locations
          args(includeDeprecated: true) {
            ...InputValue
          }
        }
      }
    }

    fragment FullType on __Type {
      kind
      name
      description
      
      
      fields(includeDeprecated: true) {
        name
        description
        args(includeDeprecated: true) {
          ...InputValue
        }
        type {
          ...TypeRef
        }
        isDeprecated
        deprecationReason
      }
      inputFields(includeDeprecated: true) {
        ...InputValue
      }
      interfaces {
        ...TypeRef
      }
      enumValues(includeDeprecated: true) {
        name
        description
        isDeprecated
        deprecationReason
      }
      possibleTypes {
        ...TypeRef
      }
    }

    fragment InputValue on __InputValue {
      name
      description
      type { ...TypeRef }
      defaultValue
      isDeprecated
      deprecationReason
    }

    fragment TypeRef on __Type {
      kind
      name
      ofType {
        name
        kind
        ofType {
          name
          kind
          ofType {
            name
            kind
            ofType {
              name
              kind
              ofType {
                name
                kind
                ofType {
                  name
                  kind
                  ofType {
                    name
                    kind
                    ofType {
                      name
                      kind
                      ofType {
                        name
                        kind
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  
`

// TestDatabaseUnavailable: a query-layer failure is REST's `Service
// unavailable` (with extensions.code SERVICE_UNAVAILABLE), never the cause.
func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	d, err := db.Open(db.Options{URL: "postgres://nobody@127.0.0.1:1/none?sslmode=disable", ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h := graph.NewHandler(app.New(d, app.Rules{}), graph.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e := &env{handler: h}
	status, r, _ := e.post(t, strings.NewReader(queryBody(`{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber } schedules { nodes { id } } }`)), -1)
	if status != 200 || len(r.Errors) != 2 {
		t.Fatalf("%d %+v", status, r.Errors)
	}
	for _, e := range r.Errors {
		if e.Message != "Service unavailable" || e.Extensions["code"] != graph.CodeUnavailable {
			t.Errorf("%+v", e)
		}
	}
}

// TestIntrospectionSwitch: introspection answers by default and is refused
// when turned off by configuration; ordinary queries work either way.
func TestIntrospectionSwitch(t *testing.T) {
	t.Parallel()
	const q = `{ __schema { queryType { name } } }`
	for _, off := range []bool{false, true} {
		e := newEnv(t, fixtureSQL, graph.Options{NoIntrospection: off})
		_, r, _ := e.post(t, strings.NewReader(queryBody(q)), -1)
		refused := len(r.Errors) > 0
		if refused != off {
			t.Errorf("NoIntrospection=%v: answer %+v", off, r)
		}
		if _, r, _ := e.post(t, strings.NewReader(queryBody(`{ topic(id: "7") { id } }`)), -1); len(r.Errors) > 0 {
			t.Errorf("NoIntrospection=%v: plain query refused: %+v", off, r.Errors)
		}
	}
}

// TestBatchingBounded: a JSON array of operations (batching) is not
// executed at all: one request runs one operation.
func TestBatchingBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	ops := make([]string, 50)
	for i := range ops {
		ops[i] = queryBody(`{ topic(id: "7") { id } }`)
	}
	status, r, _ := e.post(t, strings.NewReader("["+strings.Join(ops, ",")+"]"), -1)
	if status < 400 || status >= 500 || len(r.Errors) == 0 {
		t.Fatalf("batch of 50 operations: status %d, %+v", status, r)
	}
}
