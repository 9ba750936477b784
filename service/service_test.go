package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/config"
	"mirrorql/dashboard"
	"mirrorql/db"
	"mirrorql/rest"
	"mirrorql/service/policy"
)

func TestRequestDeadline(t *testing.T) {
	e := echo.New()
	e.HTTPErrorHandler = policy.ErrorHandler(nil)
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

// The service answers /favicon.ico with the dashboard's SVG icon, kept by
// browsers, and exposes Link and X-Request-Id to other origins.
func TestFavicon(t *testing.T) {
	cfg := config.Defaults()
	cfg.LiveEnabled, cfg.CacheEnabled = false, false
	// No query is made: a database nobody answers at will do.
	cfg.DatabaseURL = "postgres://nobody@127.0.0.1:1/none?sslmode=disable"
	d, err := db.Open(db.Options{URL: cfg.DatabaseURL, PoolSize: 1,
		StatementTimeout: time.Second, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	log := slog.New(slog.DiscardHandler)
	ops, err := NewOperations(context.Background(), cfg, d, log)
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	e := New(cfg, d, log, ops, []byte("openapi: 3.0.3\n"))

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(method, RouteFavicon, nil))
		h := rec.Header()
		if rec.Code != http.StatusOK || h.Get("Content-Type") != "image/svg+xml" ||
			h.Get("Cache-Control") != "public, max-age=604800" || h.Get("ETag") == "" {
			t.Errorf("%s %s: %d %v", method, RouteFavicon, rec.Code, h)
		}
		if method == http.MethodGet && !bytes.Equal(rec.Body.Bytes(), dashboard.Favicon) {
			t.Errorf("GET %s: body %q", RouteFavicon, rec.Body.String())
		}
		if got := h.Get("Access-Control-Expose-Headers"); got != "Link, X-Request-Id" {
			t.Errorf("%s %s: Access-Control-Expose-Headers %q", method, RouteFavicon, got)
		}
		if method == http.MethodGet {
			// Revalidation after the week: 304.
			req := httptest.NewRequest(method, RouteFavicon, nil)
			req.Header.Set("If-None-Match", h.Get("ETag"))
			rec = httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified {
				t.Errorf("GET %s with its ETag: %d", RouteFavicon, rec.Code)
			}
		}
	}
	if !bytes.HasPrefix(dashboard.Favicon, []byte("<svg")) {
		t.Errorf("the icon is not an SVG: %.40q", dashboard.Favicon)
	}
}
