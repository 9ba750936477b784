package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mirrorql/tests/testdb"
)

// TestGraphQLExplorerInBrowser opens the GraphiQL explorer of the built
// service in headless Chromium (Debian package `chromium`, installed here when
// missing), lets it run a query given in the URL and looks for the result on
// the rendered page. The explorer's assets are embedded: the page refers to
// no other host (checked below), and Chromium runs with its own background
// networking off.
func TestGraphQLExplorerInBrowser(t *testing.T) {
	chromium := gqlChromium(t)
	dbURL, b := testdb.New(t)
	if _, err := b.DB.ExecContext(context.Background(), gqlFixture(t)); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dbURL)

	// The explorer is what a browser gets at GET /graphql. (Fetched directly:
	// the harness's get also checks answers against openapi.yml, which
	// describes the JSON answers of /graphql.)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/graphql", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	status, hdr := resp.StatusCode, resp.Header
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "graphiql.min.js") {
		t.Fatalf("GET /graphql (text/html): %d %s\n%s", status, hdr.Get("Content-Type"), body)
	}
	for _, ref := range []string{"http://", "https://", "//cdn", "unpkg", "jsdelivr"} {
		if strings.Contains(string(body), ref) {
			t.Errorf("explorer page refers to %q: it must load only embedded assets", ref)
		}
	}

	query := `{ topic(id: "0.0.7") { memo messages(first: 1) { nodes { message(encoding: UTF8) } } } }`
	page := srv.URL + "/graphql?run=1&query=" + url.QueryEscape(query)
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+profile,
		"--virtual-time-budget=20000", "--dump-dom", page)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("chromium: %v\n%s", err, stderr)
	}
	dom := string(out)
	// the result pane renders the response JSON: "memo": "topic seven"
	for _, want := range []string{`topic seven`, `hello`, `graphiql-container`} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q; DOM (%d bytes):\n%s", want, len(dom), gqlTail(dom, 4000))
		}
	}
	if t.Failed() {
		t.Logf("server log:\n%s", srv.logs.String())
	}
}

// gqlChromium finds Chromium, installing the Debian package when it is
// missing and apt-get is usable; it skips, saying why, when neither works.
func gqlChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("chromium is not installed and apt-get is not available to install it: skipping the browser test")
	}
	t.Log("chromium is missing: installing the Debian package (apt-get install -y chromium)")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	install := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, gqlTail(string(out), 2000))
		}
		return nil
	}
	err := install("install", "-y", "--no-install-recommends", "chromium")
	if err != nil {
		// the package lists may be missing or stale
		if uerr := install("update"); uerr == nil {
			err = install("install", "-y", "--no-install-recommends", "chromium")
		}
	}
	if err != nil {
		t.Skipf("chromium could not be installed, skipping the browser test: %v", err)
	}
	p, lerr := exec.LookPath("chromium")
	if lerr != nil {
		t.Skipf("chromium was installed but is not on PATH: %v", lerr)
	}
	return p
}

func gqlFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../graph/testdata/fixture.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gqlTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
