package policy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestCORS(t *testing.T) {
	e := echo.New()
	e.Use(CORS)
	e.GET("/x", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	tests := []struct {
		name    string
		method  string
		header  map[string]string
		status  int
		methods string
	}{
		{name: "simple request", method: http.MethodGet, status: http.StatusOK},
		{name: "preflight", method: http.MethodOptions, header: map[string]string{"Access-Control-Request-Method": "GET"},
			status: http.StatusNoContent, methods: "GET,HEAD,PUT,PATCH,POST,DELETE"},
		{name: "bare OPTIONS is a preflight too", method: http.MethodOptions, status: http.StatusNoContent,
			methods: "GET,HEAD,PUT,PATCH,POST,DELETE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/x", nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
				rec.Header().Get("Access-Control-Allow-Methods") != tt.methods ||
				rec.Header().Get("Access-Control-Expose-Headers") != "Link, X-Request-Id" {
				t.Errorf("%d %v", rec.Code, rec.Header())
			}
		})
	}
}
