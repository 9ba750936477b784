package graph

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// sseTransport is graphql-sse's distinct connections mode: a POST whose
// Accept asks for text/event-stream gets one `next` event per response and
// a `complete` event at the end. It stands in for gqlgen's SSE transport,
// which writes its keep-alive comments from a second goroutine without the
// lock its responses take, has no way to report an error that ends a
// subscription, and leaves the server's read and write timeouts on a
// response that lives for hours; here every write has its own deadline
// instead.
type sseTransport struct {
	keepAlive, writeTimeout time.Duration
}

var _ graphql.Transport = sseTransport{}

func (sseTransport) Supports(r *http.Request) bool {
	if !wantsEventStream(r) {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := readBody(r)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	params, ok := decodeParams(body)
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "json request body could not be decoded")
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	st := &stream{}
	var failed []*gqlerror.Error
	var failedMu sync.Mutex
	st.fail = func(_ context.Context, err *gqlerror.Error) {
		failedMu.Lock()
		failed = append(failed, err)
		failedMu.Unlock()
	}
	ctx = withStream(ctx, st)

	ctrl := http.NewResponseController(w)
	// The server's read timeout would end the request's context mid-stream.
	_ = ctrl.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies must pass events on as they come
	w.WriteHeader(http.StatusOK)

	var mu sync.Mutex
	write := func(chunk string) bool {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return false
		}
		_ = ctrl.SetWriteDeadline(time.Now().Add(t.writeTimeout))
		if _, err := w.Write([]byte(chunk)); err != nil {
			cancel()
			return false
		}
		if err := ctrl.Flush(); err != nil {
			cancel()
			return false
		}
		return true
	}
	next := func(resp *graphql.Response) bool {
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err) // as gqlgen's transports: the executor wrote data that is not JSON
		}
		return write("event: next\ndata: " + string(b) + "\n\n")
	}
	if !write(":\n\n") {
		return
	}
	var pings sync.WaitGroup
	pings.Add(1)
	go func() {
		defer pings.Done()
		tick := time.NewTicker(t.keepAlive)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				write(": ping\n\n")
			}
		}
	}()

	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		next(exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
	} else {
		responses, rctx := exec.DispatchOperation(ctx, rc)
		for {
			resp := responses(rctx)
			if resp == nil || !next(resp) {
				break
			}
		}
	}
	failedMu.Lock()
	errs := failed
	failedMu.Unlock()
	if len(errs) > 0 {
		next(&graphql.Response{Errors: errs})
	}
	write("event: complete\ndata:\n\n")
	cancel()
	pings.Wait()
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"errors": []map[string]string{{"message": msg}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
