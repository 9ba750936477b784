package explorer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"mirrorql/vendored"
)

// TestAssetsMatchREADME: the embedded third-party files are the ones the
// README lists (npm tarball contents, by SRI hash), each beside its licence,
// and every other embedded file is ours.
func TestAssetsMatchREADME(t *testing.T) {
	rows, errs := vendored.Verify("assets/README.md", assets, "assets", "explorer.js", "README.md")
	for _, err := range errs {
		t.Error(err)
	}
	if len(rows) != 5 {
		t.Errorf("README lists %d assets, want 5", len(rows))
	}
	for _, r := range rows {
		if r.Licence != "MIT" {
			t.Errorf("%s: licence %s, want MIT", r.Name, r.Licence)
		}
	}
}

// TestHandler: the page refers only to embedded assets, which are served
// with their types; anything else below the assets is not found.
func TestHandler(t *testing.T) {
	notFound := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("the service's 404"))
	})
	h := Handler("/graphql", notFound)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	page := get("/graphql")
	if page.Code != 200 || page.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("page: %d %s", page.Code, page.Header().Get("Content-Type"))
	}
	if csp := page.Header().Get("Content-Security-Policy"); csp != contentSecurityPolicy("example.com") {
		t.Errorf("page's Content-Security-Policy: %q", csp)
	}
	html, _ := io.ReadAll(page.Body)
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(html), -1)
	if len(refs) != 6 {
		t.Errorf("page has %d references, want 6: %v", len(refs), refs)
	}
	// explorer.js builds the page's WebSocket client from graphql-ws's global
	if ws, ours := strings.Index(string(html), "graphql-ws.min.js"), strings.Index(string(html), "explorer.js"); ws < 0 || ours < ws {
		t.Errorf("the page does not load graphql-ws.min.js before explorer.js:\n%s", html)
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref[1], "/graphql/explorer/") {
			t.Errorf("page refers to %s, not an embedded asset", ref[1])
			continue
		}
		rec := get(ref[1])
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("%s: %d", ref[1], rec.Code)
		}
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(ref[1], ".css") {
			want = "text/css; charset=utf-8"
		}
		if ct := rec.Header().Get("Content-Type"); ct != want {
			t.Errorf("%s: content type %s", ref[1], ct)
		}
	}
	for _, path := range []string{"/graphql/explorer/nope.js", "/graphql/explorer/", "/graphql/explorer/../explorer.go"} {
		if rec := get(path); rec.Code != 404 || rec.Body.String() != "the service's 404" {
			t.Errorf("%s: %d %q, want the service's 404", path, rec.Code, rec.Body)
		}
	}
}

// TestContentSecurityPolicy: the page may connect to its own host over
// HTTP and WebSocket, and nowhere else (httpserver.SameOriginPolicy, which has the cases
// of the Host).
func TestContentSecurityPolicy(t *testing.T) {
	const want = "default-src 'self'; connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080; img-src 'self' data:; " +
		"font-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'"
	if got := contentSecurityPolicy("127.0.0.1:8080"); got != want {
		t.Errorf("contentSecurityPolicy\n got %s\nwant %s", got, want)
	}
}

func TestWantsPage(t *testing.T) {
	tests := []struct {
		method, accept string
		want           bool
	}{
		{"GET", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		{"GET", "TEXT/HTML", true},
		{"HEAD", "text/html", true},
		{"GET", "application/json", false},
		{"GET", "application/graphql-response+json, application/json;q=0.9", false},
		{"GET", "", false},
		{"GET", "*/*", false},
		{"POST", "text/html", false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, "/graphql", nil)
		r.Header.Set("Accept", tc.accept)
		if got := WantsPage(r); got != tc.want {
			t.Errorf("%s %q: %v", tc.method, tc.accept, got)
		}
	}
}
