package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"

	"mirrorql/app"
	"mirrorql/graph/explorer"
)

// Endpoint is where the GraphQL face is mounted; the explorer's assets are
// served below Endpoint+explorer.AssetsDir.
const Endpoint = "/graphql"

// NewHandler is the GraphQL face: POST and GET (`?query=`) GraphQL requests,
// and the GraphiQL explorer for a browser's GET (Accept: text/html) and its
// assets. Mount it on Endpoint and on Endpoint+"/explorer/*".
func NewHandler(r *app.Ledger, o Options) http.Handler {
	api := NewAPI(r, o)
	page := explorer.Handler(Endpoint, o.withDefaults().NotFound)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if explorer.WantsPage(r) || strings.HasPrefix(r.URL.Path, Endpoint+explorer.AssetsDir) {
			page.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// NewAPI is the GraphQL endpoint alone, assembled explicitly: the POST and
// GET transports, introspection, a parsed-query cache, automatic persisted
// queries, the operation guard
// (depth and complexity), the parser's token limit, the body size limit, the
// request's dataloaders, and compiled operations unless o turns them off.
func NewAPI(r *app.Ledger, o Options) http.Handler {
	return newAPI(r, o, !o.NoCompiledOperations, nil).Handler
}

// api is the endpoint and its compiled operations (nil when off).
type api struct {
	http.Handler
	plans *plans
	srv   *handler.Server // its extensions are what the plans must account for
}

// newAPI is NewAPI with compiled operations on or off and the POST transport
// given (nil: postJSON); tests compare postJSON with gqlgen's own, and the
// endpoint with and without compiled operations.
func newAPI(r *app.Ledger, o Options, compiled bool, post graphql.Transport) api {
	o = o.withDefaults()
	res := newResolver(r, o)
	var pl *plans
	if compiled {
		pl = newPlans(res)
	}
	if post == nil {
		post = postJSON{plans: pl}
	}
	schema := NewExecutableSchema(Config{Resolvers: res})
	srv := handler.New(schema)
	// gqlgen serves a request with the first transport that supports it:
	// the upgrade and the event stream before the POST that would take
	// them too.
	srv.AddTransport(o.Streams.websocketTransport(o.Stream))
	srv.AddTransport(sseTransport{keepAlive: o.Stream.KeepAlive, writeTimeout: o.Stream.WriteTimeout})
	srv.AddTransport(getTransport{})
	srv.AddTransport(post)
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	// Automatic persisted queries: a client that sent a query once may send
	// its SHA-256 alone (Apollo's protocol), as a GET a cache can keep.
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.SetParserTokenLimit(o.MaxTokens)
	if !o.NoIntrospection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(newOperationGuard(o.MaxDepth, o.MaxComplexity, res.rules.Pages))
	srv.Use(deferredUnderViews{})
	srv.Use(streamLoaders{fresh: func(ctx context.Context) context.Context {
		return withFreshLoaders(ctx, r, o.LoaderWait)
	}})
	srv.SetErrorPresenter(res.presentError)
	srv.SetRecoverFunc(recoverPanic(o.Log))
	h := withExecutor(schema, o.FieldByField, withLoaders(r, o.LoaderWait, srv))
	if pl != nil {
		h = pl.before(h)
	}
	return api{o.Streams.upgrading(limitRequest(o.MaxBodyBytes, h), o.Stream.WriteTimeout), pl, srv}
}

// limitRequest refuses a body (or a GET query string) larger than max bytes
// before anything parses it: 413 (414 for the query string) with a GraphQL
// error body.
func limitRequest(max int64, next http.Handler) http.Handler {
	tooLarge := func(w http.ResponseWriter, status int, what string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"errors":[{"message":"%s is larger than %d bytes","extensions":{"code":"REQUEST_TOO_LARGE"}}]}`, what, max)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int64(len(r.URL.RawQuery)) > max {
			tooLarge(w, http.StatusRequestURITooLong, "the query string")
			return
		}
		if r.ContentLength > max {
			tooLarge(w, http.StatusRequestEntityTooLarge, "the request body")
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := readLimited(w, r, max)
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				tooLarge(w, http.StatusRequestEntityTooLarge, "the request body")
				return
			case err != nil:
				http.Error(w, "could not read the request body", http.StatusBadRequest)
				return
			}
			h := &heldBody{b: body}
			h.Reset(body)
			r.Body = h
		}
		next.ServeHTTP(w, r)
	})
}

// heldBody is a request body limitRequest has read whole; readBody takes
// its bytes rather than copying them once more.
type heldBody struct {
	bytes.Reader
	b []byte
}

func (*heldBody) Close() error { return nil }

// readLimited reads r's body, at most max bytes (a *http.MaxBytesError
// past them): of a length given in Content-Length (at most max, as
// limitRequest checked), into a buffer of that length at once; else as it
// comes.
func readLimited(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= max {
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

// heldBytes is r's body as limitRequest held it, when nothing has read from
// it yet.
func heldBytes(r *http.Request) ([]byte, bool) {
	if h, ok := r.Body.(*heldBody); ok && h.Len() == len(h.b) {
		return h.b, true
	}
	return nil, false
}

// readBody is the whole of r's body.
func readBody(r *http.Request) ([]byte, error) {
	if b, ok := heldBytes(r); ok {
		return b, nil
	}
	return io.ReadAll(r.Body)
}
