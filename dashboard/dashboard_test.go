package dashboard

import (
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"mirrorql/graph/explorer"
	"mirrorql/vendored"
)

// TestDashboardAssetsMatchREADME: the vendored files are the ones
// assets/README.md lists (uplot@1.6.32, sha256 in SRI form, licence), each
// beside its licence, and nothing else third-party is embedded.
func TestDashboardAssetsMatchREADME(t *testing.T) {
	rows, errs := vendored.Verify("assets/README.md", files, "assets", "dashboard.js", "dashboard.css", "favicon.svg")
	for _, err := range errs {
		t.Error(err)
	}
	if len(rows) != 3 {
		t.Errorf("README lists %d files, want 3 (uPlot's script, stylesheet and licence)", len(rows))
	}
	for _, r := range rows {
		if r.Package != "uplot@1.6.32" || r.Licence != "MIT" {
			t.Errorf("%s: from %s (%s), want uplot@1.6.32 (MIT)", r.Name, r.Package, r.Licence)
		}
	}
	if lic, _ := files.ReadFile("assets/LICENSE.uplot"); !strings.Contains(string(lic), "Copyright (c) 2022 Leon Sorokin") {
		t.Errorf("LICENSE.uplot is not uPlot's licence:\n%s", lic)
	}
}

func newEcho() *echo.Echo {
	e := echo.New()
	Register(e, "/graphql")
	return e
}

func do(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

var (
	scriptOrStyle = regexp.MustCompile(`<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"`)
	anchor        = regexp.MustCompile(`<a\b[^>]*\bhref="([^"]+)"`)
	image         = regexp.MustCompile(`<img\b[^>]*\bsrc="([^"]+)"`)
)

// TestDashboardPage: /dashboard and /dashboard/ answer the page with its policy; it
// has no inline script, style or handler, and every file it loads is an
// embedded asset with its version or the explorer's graphql-ws client.
func TestDashboardPage(t *testing.T) {
	e := newEcho()
	for _, route := range []string{"/dashboard", "/dashboard/"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := do(e, method, route)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("%s %s: %d %s", method, route, rec.Code, rec.Header().Get("Content-Type"))
			}
			if csp := rec.Header().Get("Content-Security-Policy"); csp != contentSecurityPolicy("example.com") {
				t.Errorf("%s %s: Content-Security-Policy %q", method, route, csp)
			}
			if method == http.MethodHead && rec.Body.Len() != 0 {
				t.Errorf("HEAD %s has a body", route)
			}
		}
	}
	html := do(e, http.MethodGet, "/dashboard").Body.String()
	for _, bad := range []string{"<style", " style=", " onclick=", " onload=", "javascript:", "http://", "https://", "//cdn"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if n := strings.Count(html, "<script"); n != strings.Count(html, "<script src=") || n != 1 {
		t.Errorf("the page has %d script elements, want 1 (ours, which runs the preloaded libraries), from a file:\n%s", n, html)
	}
	for _, lib := range []string{
		`<link rel="preload" as="script" href="/graphql/explorer/graphql-ws.min.js" data-library="graphql-ws">`,
		`<link rel="preload" as="script" href="/dashboard/assets/uPlot.iife.min.js?v=`,
	} {
		if !strings.Contains(html, lib) {
			t.Errorf("the page lacks %s", lib)
		}
	}
	if !strings.Contains(html, `data-endpoint="/graphql"`) {
		t.Errorf("the page does not name the endpoint")
	}

	refs := append(scriptOrStyle.FindAllStringSubmatch(html, -1), image.FindAllStringSubmatch(html, -1)...)
	if len(refs) != 7 {
		t.Errorf("the page loads %d files, want 7 (2 stylesheets, icon, logo, 3 scripts, 2 of them preloaded): %q", len(refs), refs)
	}
	wsClient := false
	for _, ref := range refs {
		u := ref[1]
		if u == "/graphql/explorer/graphql-ws.min.js" {
			wsClient = true
			continue
		}
		name, version, ok := strings.Cut(strings.TrimPrefix(u, AssetsPrefix), "?v=")
		if !strings.HasPrefix(u, AssetsPrefix) || !ok || len(version) != 12 {
			t.Errorf("the page loads %s: neither a versioned embedded asset nor the explorer's graphql-ws", u)
			continue
		}
		rec := do(e, http.MethodGet, u)
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("%s: %d", u, rec.Code)
			continue
		}
		want := map[string]string{
			".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
		}[path.Ext(name)]
		if ct := rec.Header().Get("Content-Type"); ct != want {
			t.Errorf("%s: Content-Type %q, want %q", u, ct, want)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", u, cc)
		}
		// without the version, or with another one: revalidated by ETag
		plain := do(e, http.MethodGet, AssetsPrefix+name)
		if cc := plain.Header().Get("Cache-Control"); plain.Code != 200 || cc != "no-cache" {
			t.Errorf("%s: %d, Cache-Control %q", AssetsPrefix+name, plain.Code, cc)
		}
		if again := do(e, http.MethodGet, AssetsPrefix+name, "If-None-Match", plain.Header().Get("ETag")); again.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", name, again.Code)
		}
	}
	if !wsClient {
		t.Errorf("the page does not load the explorer's graphql-ws client")
	}
	links := map[string]bool{}
	for _, m := range anchor.FindAllStringSubmatch(html, -1) {
		links[m[1]] = true
	}
	for _, want := range []string{"/graphql", "/api/v1/docs", "#/topics", "#/schedules"} {
		if !links[want] {
			t.Errorf("the page has no link to %s: %v", want, links)
		}
	}
}

// TestDashboardWSClientFromExplorer: the graphql-ws client the page loads is one the
// explorer serves, and it defines the global the page uses.
func TestDashboardWSClientFromExplorer(t *testing.T) {
	h := explorer.Handler("/graphql", http.NotFoundHandler())
	rec := do(h, http.MethodGet, "/graphql"+explorer.AssetsDir+wsClientFile)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("the explorer answers %s with %d %s", wsClientFile, rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{"graphqlWs", "createClient", "graphql-transport-ws"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s lacks %q", wsClientFile, want)
		}
	}
}

// TestDashboardNotFound: what is not an asset is the service's 404 (Echo's
// ErrNotFound, which the service's error handler renders).
func TestDashboardNotFound(t *testing.T) {
	e := newEcho()
	for _, p := range []string{
		AssetsPrefix, AssetsPrefix + "nope.js", AssetsPrefix + "README.md", AssetsPrefix + "../dashboard.go",
		AssetsPrefix + "%2e%2e/page.html", "/dashboard/page.html", "/dashboard/x",
	} {
		if rec := do(e, http.MethodGet, p); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
	if rec := do(e, http.MethodPost, "/dashboard"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /dashboard: %d, want 405", rec.Code)
	}
	if rec := do(e, http.MethodGet, AssetsPrefix+"LICENSE.uplot"); rec.Code != 200 ||
		rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("the licence: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestDashboardContentSecurityPolicy: the page runs only this host's files and
// connects only to this host, over HTTP and WebSocket (httpserver.SameOriginPolicy, which
// has the cases of the Host).
func TestDashboardContentSecurityPolicy(t *testing.T) {
	const want = "default-src 'self'; connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080; img-src 'self'; style-src 'self'; " +
		"script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	if got := contentSecurityPolicy("127.0.0.1:8080"); got != want {
		t.Errorf("contentSecurityPolicy\n got %s\nwant %s", got, want)
	}
}
