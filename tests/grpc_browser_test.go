package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mirrorql/tests/testdb"
	"mirrorql/vendored"
)

// TestGRPCWebInBrowser: a page served from another origin follows a topic
// over gRPC-Web (connect-web, bundled ahead of time in testdata/grpcweb) in
// headless Chromium, and shows a message committed after it subscribed. The
// page may talk to its own origin and to the service alone, and report no
// problem (CORS refusals included).
func TestGRPCWebInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	const dir = "testdata/grpcweb"
	rows, errs := vendored.Verify(dir+"/README.md", os.DirFS(dir), ".", "index.html", "README.md")
	for _, err := range errs {
		t.Error(err)
	}
	if len(rows) != 3 {
		t.Errorf("testdata/grpcweb/README.md lists %d files, want 3", len(rows))
	}
	oneBrowserAtATime(t)
	dbURL, b := testdb.New(t)
	liveTopic(t, b, 521)
	srv := startServer(t, dbURL)
	page := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(page.Close)
	pageURL, _ := url.Parse(page.URL)
	srvURL, _ := url.Parse(srv.URL)

	traffic := &pageTraffic{}
	tab := newBrowserTab(t, 800, 600, traffic.observe)
	tab.explain = func() string {
		return traffic.report() + "\npage: " + tab.eval(`document.body.innerText`)
	}
	tab.step("opening the page", patience,
		chromedp.Navigate(page.URL+"/index.html?topic=521&service="+url.QueryEscape(srv.URL)))
	tab.until("waiting for the page to subscribe", `document.getElementById('state').innerText === 'subscribing'`, patience)
	waitSubscribed(t, srv, 1)

	text := fmt.Sprintf("grüße über gRPC-Web %d ✓", time.Now().UnixNano())
	appendMessages(t, b, liveRow{Topic: 521, Text: text})
	tab.until("waiting for the message on the page",
		fmt.Sprintf(`document.getElementById('messages').innerText.includes(%q)`, "1: "+text), patience)
	tab.screenshot("grpc-web.png")

	traffic.mu.Lock()
	defer traffic.mu.Unlock()
	for _, raw := range traffic.requests {
		u, err := url.Parse(raw)
		if err != nil || (u.Host != pageURL.Host && u.Host != srvURL.Host) {
			t.Errorf("the page requested %s: only its origin and the service are allowed", raw)
		}
	}
	for _, p := range traffic.problems {
		t.Errorf("the page reported: %s", p)
	}
}
