package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/config"
	"mirrorql/rest"
)

func TestRequestDeadline(t *testing.T) {
	e := echo.New()
	e.HTTPErrorHandler = rest.ErrorHandler(nil)
	e.Use(requestDeadline(50 * time.Millisecond))
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

func TestAddresses(t *testing.T) {
	for listen, want := range map[string]string{
		":8080": "127.0.0.1:8080", "0.0.0.0:80": "127.0.0.1:80", "[::]:8080": "127.0.0.1:8080",
		"127.0.0.2:9": "127.0.0.2:9", "localhost:1": "localhost:1",
	} {
		if got := loopback(listen); got != want {
			t.Errorf("loopback(%q) = %q, want %q", listen, got, want)
		}
	}
	for addr, want := range map[string]string{"[::]:8080": "localhost:8080", "0.0.0.0:1": "localhost:1", "127.0.0.1:5": "127.0.0.1:5"} {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := browsable(a, addr); got != want {
			t.Errorf("browsable(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != routeReadiness {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	cfg := testConfig(t)
	cfg.Listen = srv.Listener.Addr().String()
	if err := healthcheck(context.Background(), cfg); err != nil {
		t.Errorf("ready: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := healthcheck(context.Background(), cfg); err == nil {
		t.Error("unready service reported healthy")
	}
	srv.Close()
	if err := healthcheck(context.Background(), cfg); err == nil {
		t.Error("no service reported healthy")
	}
}

func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load()
	if err != nil {
		t.Skipf("configuration from the environment: %v", err)
	}
	return cfg
}
