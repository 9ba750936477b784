package explorer

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// TestAssetsMatchREADME: the embedded third-party files are the ones the
// README lists (npm tarball contents, by SRI hash), each beside its licence,
// and every embedded script or stylesheet but ours is listed.
func TestAssetsMatchREADME(t *testing.T) {
	readme, err := os.ReadFile("assets/README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| ([a-z.-]+\\.(?:js|css)) \\| .* \\| `([A-Za-z0-9+/=]+)` \\| MIT, (LICENSE\\.[a-z-]+) \\|$")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	if len(rows) != 5 {
		t.Fatalf("README lists %d assets, want 5", len(rows))
	}
	listed := map[string]bool{"explorer.js": true}
	for _, r := range rows {
		listed[r[1]] = true
		body, err := assets.ReadFile("assets/" + r[1])
		if err != nil {
			t.Errorf("%s is not embedded: %v", r[1], err)
			continue
		}
		sum := sha256.Sum256(body)
		if got := base64.StdEncoding.EncodeToString(sum[:]); got != r[2] {
			t.Errorf("%s: sha256 %s, README says %s", r[1], got, r[2])
		}
		if lic, err := assets.ReadFile("assets/" + r[3]); err != nil || !strings.Contains(string(lic), "MIT License") {
			t.Errorf("%s: licence %s missing or not MIT: %v", r[1], r[3], err)
		}
	}
	for _, pattern := range []string{"assets/*.js", "assets/*.css"} {
		names, err := fs.Glob(assets, pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if !listed[path.Base(name)] {
				t.Errorf("%s is embedded but not in the README's table", name)
			}
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
// HTTP and WebSocket, and nowhere else; a Host that is not a plain
// host[:port] is left to 'self' rather than written into the header.
func TestContentSecurityPolicy(t *testing.T) {
	const rest = "; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'"
	tests := []struct {
		name, host, want string
	}{
		{"name and port", "127.0.0.1:8080", "default-src 'self'; connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080" + rest},
		{"name", "mirror.example.com", "default-src 'self'; connect-src 'self' ws://mirror.example.com wss://mirror.example.com" + rest},
		{"no host", "", "default-src 'self'; connect-src 'self'" + rest},
		{"IPv6 literal", "[::1]:8080", "default-src 'self'; connect-src 'self'" + rest},
		{"directive injected", "a.example; script-src *", "default-src 'self'; connect-src 'self'" + rest},
		{"source list injected", "a.example *", "default-src 'self'; connect-src 'self'" + rest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := contentSecurityPolicy(tc.host); got != tc.want {
				t.Errorf("contentSecurityPolicy(%q)\n got %s\nwant %s", tc.host, got, tc.want)
			}
		})
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
