package service

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/rest"
)

func TestRequestDeadline(t *testing.T) {
	e := echo.New()
	e.HTTPErrorHandler = rest.ErrorHandler(nil)
	e.Use(RequestDeadline(50 * time.Millisecond))
	var sawDeadline bool
	e.Match([]string{http.MethodGet, http.MethodHead}, "/slow", func(c echo.Context) error {
		_, sawDeadline = c.Request().Context().Deadline()
		<-c.Request().Context().Done() // a query running into the deadline
		return errors.New("query: " + c.Request().Context().Err().Error())
	})
	e.GET("/fast", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/bad", func(c echo.Context) error { return echo.NewHTTPError(http.StatusNotFound) })

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/slow", nil))
	if !sawDeadline {
		t.Error("the handler's context has no deadline")
	}
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != `{"_status":{"messages":[{"message":"Service unavailable"}]}}` ||
		rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("slow: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/slow", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Body.Len() != 0 {
		t.Errorf("HEAD slow: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fast", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("fast: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/bad", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("an error within the deadline became %d", rec.Code)
	}
}

// TestComposedOnce: the chain composed once runs its middleware in order,
// outermost first, around the handler the router found for each request
// (and Echo's not-found handler for a path without a route), and builds
// nothing per request.
func TestComposedOnce(t *testing.T) {
	var trace []string
	mark := func(name string) echo.MiddlewareFunc {
		return func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				trace = append(trace, name)
				return next(c)
			}
		}
	}
	built := 0
	counted := func(next echo.HandlerFunc) echo.HandlerFunc { built++; return next }
	e := echo.New()
	e.Pre(rest.CanonicalRoute)
	e.Use(composedOnce(mark("outer"), counted, mark("inner")))
	e.GET("/a", func(c echo.Context) error { trace = append(trace, "a"); return c.String(http.StatusOK, "a") })
	e.GET("/b/:id", func(c echo.Context) error {
		trace = append(trace, "b"+c.Param("id"))
		return c.NoContent(http.StatusAccepted)
	})

	for _, tc := range []struct {
		path   string
		status int
		trace  string
	}{
		{"/a", http.StatusOK, "[outer inner a]"},
		{"/b/7", http.StatusAccepted, "[outer inner b7]"},
		{"/nowhere", http.StatusNotFound, "[outer inner]"},
		{"/a", http.StatusOK, "[outer inner a]"},
	} {
		trace = nil
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.status || fmt.Sprint(trace) != tc.trace {
			t.Errorf("%s: %d %v, want %d %s", tc.path, rec.Code, trace, tc.status, tc.trace)
		}
	}
	if built != 1 {
		t.Errorf("the chain was built %d times, want once", built)
	}
}
