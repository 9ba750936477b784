package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Request errors — a document that does not parse, does not validate or
// whose variables do not coerce, or is refused by the operation guard —
// are answered as the GraphQL-over-HTTP specification asks, which gqlgen's
// transports do not quite do:
//
//   - to a client that accepts application/json (or states nothing), 200
//     with the errors: a well-formed GraphQL-over-HTTP request is a success
//     at the HTTP level, and several popular clients turn any other status
//     into a network error and drop the messages;
//   - to one that asks for application/graphql-response+json, 400 and a
//     body with no `data` entry, since execution never started;
//   - a request with no query at all is 400 either way: its parameters are
//     invalid.
//
// The messages and codes of the errors are gqlgen's, unchanged.
func writeRequestError(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, rc *graphql.OperationContext,
	params *graphql.RawParams, accept string, opErr gqlerror.List) {
	mediaType := responseType(accept)
	resp := exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr)
	status := http.StatusOK
	switch {
	case strings.TrimSpace(params.Query) == "":
		status = http.StatusBadRequest
	case mediaType != "application/json" && errcode.GetErrorKind(opErr) == errcode.KindProtocol:
		status = http.StatusBadRequest
	}
	var body []byte
	var err error
	if mediaType == "application/json" {
		body, err = json.Marshal(resp)
	} else {
		body, err = json.Marshal(struct {
			Errors     gqlerror.List  `json:"errors"`
			Extensions map[string]any `json:"extensions,omitempty"`
		}{resp.Errors, resp.Extensions})
	}
	if err != nil {
		panic(err) // as gqlgen's transports: errors that are not JSON
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// getTransport is gqlgen's GET transport with request errors answered by
// writeRequestError.
type getTransport struct{}

var _ graphql.Transport = getTransport{}

func (getTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method == http.MethodGet
}

func (getTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", responseType(r.Header.Get("Accept")))
		w.WriteHeader(status)
		b, _ := json.Marshal(graphql.Response{Errors: gqlerror.List{{Message: msg}}})
		_, _ = w.Write(b)
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	raw := &graphql.RawParams{Query: query.Get("query"), OperationName: query.Get("operationName"), Headers: r.Header}
	raw.ReadTime.Start = graphql.Now()
	for name, into := range map[string]*map[string]any{"variables": &raw.Variables, "extensions": &raw.Extensions} {
		if v := query.Get(name); v != "" {
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			if dec.Decode(into) != nil {
				fail(http.StatusBadRequest, name+" could not be decoded")
				return
			}
		}
	}
	raw.ReadTime.End = graphql.Now()
	rc, opErr := exec.CreateOperationContext(r.Context(), raw)
	if opErr != nil {
		writeRequestError(r.Context(), w, exec, rc, raw, r.Header.Get("Accept"), opErr)
		return
	}
	if op := rc.Doc.Operations.ForName(rc.OperationName); op.Operation != ast.Query {
		fail(http.StatusNotAcceptable, "GET requests only allow query operations")
		return
	}
	w.Header().Set("Content-Type", responseType(r.Header.Get("Accept")))
	responses, ctx := exec.DispatchOperation(r.Context(), rc)
	b, err := json.Marshal(responses(ctx))
	if err != nil {
		panic(err)
	}
	_, _ = w.Write(b)
}
