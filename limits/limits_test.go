package limits

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

func newEcho(o Options) *echo.Echo {
	e := echo.New()
	e.Use(Middleware(o))
	ok := func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return c.String(http.StatusRequestEntityTooLarge, "handler: "+err.Error())
		}
		return c.String(http.StatusOK, "ok")
	}
	e.GET("/*", ok)
	e.POST("/*", ok)
	return e
}

func do(e *echo.Echo, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// checkRefusal asserts status and the mirror node's error body.
func checkRefusal(t *testing.T, w *httptest.ResponseRecorder, status int, message string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	var body struct {
		Status struct {
			Messages []struct {
				Message string `json:"message"`
			} `json:"messages"`
		} `json:"_status"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || len(body.Status.Messages) != 1 {
		t.Fatalf("body %s is not the documented error body", w.Body)
	}
	if got := body.Status.Messages[0].Message; got != message {
		t.Errorf("message %q, want %q", got, message)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content-type %q", ct)
	}
}

func TestURLLength(t *testing.T) {
	e := newEcho(Options{MaxURLLength: 100})
	ok := "/api/v1/schedules?limit=" + strings.Repeat("1", 100-len("/api/v1/schedules?limit="))
	if w := do(e, httptest.NewRequest(http.MethodGet, ok, nil)); w.Code != http.StatusOK {
		t.Fatalf("%d bytes: %d", len(ok), w.Code)
	}
	w := do(e, httptest.NewRequest(http.MethodGet, ok+"1", nil))
	checkRefusal(t, w, http.StatusRequestURITooLong, "Request URL too long: at most 100 bytes")
}

func TestHeaderBytes(t *testing.T) {
	e := newEcho(Options{MaxHeaderBytes: 1000})
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Header.Set("X-A", strings.Repeat("a", 500))
	if w := do(e, r); w.Code != http.StatusOK {
		t.Fatalf("small headers: %d", w.Code)
	}
	r.Header.Add("X-B", strings.Repeat("b", 500))
	w := do(e, r)
	checkRefusal(t, w, http.StatusRequestHeaderFieldsTooLarge, "Request header fields too large: at most 1000 bytes")
	if w.Header().Get("Connection") != "close" {
		t.Error("431 without Connection: close")
	}
}

func TestBodyBytes(t *testing.T) {
	e := newEcho(Options{MaxBodyBytes: 10})
	if w := do(e, httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader("0123456789"))); w.Code != http.StatusOK {
		t.Fatalf("10 bytes: %d %s", w.Code, w.Body)
	}
	// Declared too long: refused before the handler.
	w := do(e, httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader("0123456789x")))
	checkRefusal(t, w, http.StatusRequestEntityTooLarge, "Request body too large: at most 10 bytes")
	// No length (chunked): the handler's read fails past the limit.
	r := httptest.NewRequest(http.MethodPost, "/graphql", io.MultiReader(strings.NewReader("0123456789x")))
	r.ContentLength = -1
	if w := do(e, r); w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "request body too large") {
		t.Errorf("chunked body past the limit: %d %s", w.Code, w.Body)
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Unix(1700000000, 0)
	e := newEcho(Options{RateLimit: 2, RateBurst: 3, Exempt: []string{"/health/liveness"}, Now: func() time.Time { return now }})
	from := func(ip, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = ip + ":12345"
		r.Header.Set("X-Forwarded-For", "10.9.9.9") // not trusted
		return do(e, r)
	}
	for i := 0; i < 3; i++ {
		if w := from("10.0.0.1", "/x"); w.Code != http.StatusOK {
			t.Fatalf("request %d of the burst: %d", i, w.Code)
		}
	}
	w := from("10.0.0.1", "/x")
	checkRefusal(t, w, http.StatusTooManyRequests, "Too many requests")
	if got := w.Header().Get("Retry-After"); got != "1" { // one token every 0.5 s
		t.Errorf("Retry-After %q, want 1", got)
	}
	if w := from("10.0.0.2", "/x"); w.Code != http.StatusOK {
		t.Errorf("another client: %d", w.Code)
	}
	if w := from("10.0.0.1", "/health/liveness"); w.Code != http.StatusOK {
		t.Errorf("exempt path: %d", w.Code)
	}
	now = now.Add(500 * time.Millisecond)
	if w := from("10.0.0.1", "/x"); w.Code != http.StatusOK {
		t.Errorf("after a token came back: %d", w.Code)
	}
	if w := from("10.0.0.1", "/x"); w.Code != http.StatusTooManyRequests {
		t.Errorf("refusals must not spend tokens, but the bucket is not empty again: %d", w.Code)
	}

	// Slow clients: Retry-After rounds up to whole seconds.
	e = newEcho(Options{RateLimit: 0.25, RateBurst: 1, Now: func() time.Time { return now }})
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	do(e, r)
	if w := do(e, r); w.Header().Get("Retry-After") != "4" {
		t.Errorf("Retry-After %q, want 4", w.Header().Get("Retry-After"))
	}
}

func TestRateLimiterForgetsIdleClients(t *testing.T) {
	now := time.Unix(1700000000, 0)
	l := newRateLimiter(10, 10, func() time.Time { return now })
	for i := 0; i < 1000; i++ {
		l.take("10.0." + string(rune('a'+i%26)) + "." + string(rune('a'+i/26)))
	}
	if l.size() != 1000 {
		t.Fatalf("%d buckets", l.size())
	}
	now = now.Add(l.idle + time.Second)
	l.take("10.1.1.1")
	if l.size() != 1 {
		t.Errorf("%d buckets after the idle period, want 1", l.size())
	}
}

func TestOffByDefault(t *testing.T) {
	e := newEcho(Options{})
	r := httptest.NewRequest(http.MethodPost, "/"+strings.Repeat("a", 100000), strings.NewReader(strings.Repeat("b", 1<<20)))
	r.Header.Set("X-Big", strings.Repeat("c", 100000))
	for i := 0; i < 100; i++ {
		if w := do(e, r); w.Code != http.StatusOK {
			t.Fatalf("zero options refused a request: %d", w.Code)
		}
		r.Body = io.NopCloser(strings.NewReader(""))
	}
}

func TestHeadHasNoBody(t *testing.T) {
	e := newEcho(Options{MaxURLLength: 10})
	e.HEAD("/*", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	w := do(e, httptest.NewRequest(http.MethodHead, "/"+strings.Repeat("a", 20), nil))
	if w.Code != http.StatusRequestURITooLong || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d with %d body bytes", w.Code, w.Body.Len())
	}
}
