package apidocs

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func get(e *echo.Echo, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

var refs = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

func TestPageLoadsOnlyLocalAssets(t *testing.T) {
	e := echo.New()
	Register(e, []byte("openapi: 3.0.3\n"))
	for _, page := range []string{RoutePage, RoutePage + "/"} {
		rec := get(e, page)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", page, rec.Code, rec.Header().Get("Content-Type"))
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", page, csp)
		}
		html := rec.Body.String()
		found := refs.FindAllStringSubmatch(html, -1)
		if len(found) < 4 {
			t.Fatalf("%s references %d assets:\n%s", page, len(found), html)
		}
		for _, m := range found {
			ref := m[1]
			if !strings.HasPrefix(ref, "/api/v1/docs/") || strings.Contains(ref, "//") {
				t.Errorf("%s references %q, not a local asset", page, ref)
				continue
			}
			if r := get(e, ref); r.Code != http.StatusOK || r.Body.Len() == 0 {
				t.Errorf("%s: asset %s: %d", page, ref, r.Code)
			}
		}
	}
	init := get(e, "/api/v1/docs/assets/swagger-initializer.js").Body.String()
	if !strings.Contains(init, `url: "/api/v1/docs/openapi.yml"`) || !strings.Contains(init, "validatorUrl: null") {
		t.Errorf("initializer does not read our spec without a validator:\n%s", init)
	}
	if js := get(e, "/api/v1/docs/assets/swagger-ui-bundle.js"); !strings.Contains(js.Header().Get("Content-Type"), "javascript") {
		t.Errorf("bundle content type %q", js.Header().Get("Content-Type"))
	}
	if spec := get(e, RouteSpec); spec.Code != http.StatusOK || spec.Body.String() != "openapi: 3.0.3\n" ||
		spec.Header().Get("Content-Type") != "application/yaml" {
		t.Errorf("spec: %d %q %q", spec.Code, spec.Header().Get("Content-Type"), spec.Body)
	}
	for _, p := range []string{"/api/v1/docs/assets/", "/api/v1/docs/assets/index.html", "/api/v1/docs/assets/missing.js"} {
		if r := get(e, p); r.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.Code)
		}
	}
}

func TestLicenceShipped(t *testing.T) {
	for _, name := range []string{"LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"} {
		if b, err := fs.ReadFile(Assets, name); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
