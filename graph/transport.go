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
	gojson "github.com/goccy/go-json"

	"mirrorql/graph/view"
)

// postJSON is gqlgen's POST transport with its common case done here: a
// request that decodes and validates, answered without errors, has its
// data written as it is. gqlgen marshals the whole response with
// encoding/json, which walks the already-encoded data byte by byte once
// more to compact and escape it: a tenth of the CPU profile of the
// topicMessage request. Everything else — undecodable bodies, operations
// that do not validate, responses with errors or extensions — is answered
// by gqlgen's transport itself, so those keep its status codes and bodies;
// request errors (a document that does not parse or validate) as
// writeRequestError says.
//
// The body is decoded with goccy/go-json: encoding/json's decoder scans a
// body twice (once to find its end, once to decode it), a visible share of a
// small request's CPU (bench/results/decisions-2026-11.md). A body it
// rejects goes to gqlgen's transport, which answers with encoding/json's
// verdict; a body it accepts decodes to what encoding/json makes of it
// (FuzzDecodeParams).
//
// With plans, every operation that validates is offered to plans.learn
// (plans.go); plans.before answers the compiled ones before they get here.
type postJSON struct {
	transport.POST
	plans *plans
}

func (t postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := readBody(r)
	if err != nil {
		t.POST.Do(w, r, exec)
		return
	}
	delegate := func() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.POST.Do(w, r, exec)
	}
	params, ok := decodeParams(body)
	if !ok {
		delegate()
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(r.Context(), params)
	if opErr != nil {
		writeRequestError(r.Context(), w, exec, rc, params, r.Header.Get("Accept"), opErr)
		return
	}
	if t.plans != nil && len(params.Extensions) == 0 {
		t.plans.learn(r.Context(), params.Query, rc)
	}
	w.Header().Set("Content-Type", responseType(r.Header.Get("Accept")))
	// The data's room is lent (view.Lend) and given back once written.
	ctx, lender := view.Lend(r.Context())
	defer lender.Return()
	responses, ctx := exec.DispatchOperation(ctx, rc)
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
	// Written in three parts rather than copied into one buffer: the data
	// is nearly all of the response.
	w.Write(dataPrefix) //nolint:errcheck // the client is gone
	w.Write(resp.Data)  //nolint:errcheck
	w.Write(dataSuffix) //nolint:errcheck
}

var dataPrefix, dataSuffix = []byte(`{"data":`), []byte(`}`)

// decodeParams decodes a POST body as gqlgen's transport does, numbers kept
// as their text (json.Number); false when it does not decode.
func decodeParams(body []byte) (*graphql.RawParams, bool) {
	var params graphql.RawParams
	dec := gojson.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&params) != nil {
		return nil, false
	}
	return &params, true
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
