package service

import (
	"errors"
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
