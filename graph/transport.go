package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// postJSON is gqlgen's POST transport with its common case done here: a
// request that decodes and validates, answered without errors, has its
// data written as it is. gqlgen marshals the whole response with
// encoding/json, which walks the already-encoded data byte by byte once
// more to compact and escape it: a tenth of the CPU profile of the
// topicMessage request. Everything else — undecodable bodies, operations
// that do not validate, responses with errors or extensions — is answered
// by gqlgen's transport itself, so those keep its status codes and bodies.
type postJSON struct{ transport.POST }

func (t postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.POST.Do(w, r, exec)
		return
	}
	delegate := func() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.POST.Do(w, r, exec)
	}
	var params graphql.RawParams
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // as gqlgen decodes variables: numbers keep their text
	if dec.Decode(&params) != nil {
		delegate()
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(r.Context(), &params)
	if opErr != nil {
		delegate()
		return
	}
	w.Header().Set("Content-Type", responseType(r.Header.Get("Accept")))
	responses, ctx := exec.DispatchOperation(r.Context(), rc)
	resp := responses(ctx)
	if len(resp.Errors) > 0 || len(resp.Extensions) > 0 || resp.Label != "" || resp.Path != nil ||
		resp.HasNext != nil || len(resp.Data) == 0 {
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err) // as gqlgen's transport: the executor wrote data that is not JSON
		}
		w.Write(b) //nolint:errcheck // the client is gone
		return
	}
	buf := make([]byte, 0, len(resp.Data)+len(`{"data":}`))
	buf = append(append(append(buf, `{"data":`...), resp.Data...), '}')
	w.Write(buf) //nolint:errcheck // the client is gone
}

// responseType is the media type of a response to a request accepting
// accept, by the GraphQL-over-HTTP rules gqlgen's transport follows:
// application/json when nothing in particular is asked for, the first of
// application/json and application/graphql-response+json that is accepted,
// and the latter when neither is.
func responseType(accept string) string {
	const plain, graphQL = "application/json", "application/graphql-response+json"
	if accept == "" {
		return plain
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", plain:
			return plain
		case graphQL:
			return graphQL
		}
	}
	return graphQL
}
