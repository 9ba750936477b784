package tests

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"mirrorql/tests/testdb"
)

// TestGraphQLExplorerSubscription follows a topic in the GraphiQL explorer
// of the built service, in headless Chromium driven over the DevTools
// protocol: the page runs a subscription given in its URL, a message is
// committed afterwards, and it must show up in the result pane. Unlike
// TestGraphQLExplorerInBrowser's --dump-dom, this sees what arrives after
// the page has subscribed. Every request the page makes, WebSockets
// included, must go to the test server, and the page must cause no
// Content-Security-Policy report and no uncaught exception.
//
// Set MIRRORQL_TEST_SCREENSHOT_DIR to keep a screenshot of the explorer
// showing the message (explorer-subscription.png).
func TestGraphQLExplorerSubscription(t *testing.T) {
	chromium := chromiumForLiveTest(t)
	dbURL, b := testdb.New(t)
	if _, err := b.DB.ExecContext(context.Background(), gqlFixture(t)); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dbURL)
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	traffic := &pageTraffic{}
	alloc, stopBrowser := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	defer stopBrowser() // before t.TempDir removes the profile
	// The listener is on from the tab's first command: it sees the
	// navigation's own request too.
	tab, closeTab := chromedp.NewContext(alloc, chromedp.WithListener(traffic.observe))
	defer closeTab()
	// The first run starts the browser, which lives as long as its context:
	// no timeout on this one, a timeout per step below.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	step := func(what string, limit time.Duration, a chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, limit)
		defer cancel()
		if _, err := chromedp.Run(ctx, a); err != nil {
			t.Fatalf("%s: %v\n%s\nresult pane: %s", what, err, traffic.report(), resultPane(tab))
		}
	}

	query := `subscription { topicMessages(topicId: "0.0.7") { sequenceNumber message(encoding: UTF8) } }`
	step("opening the explorer", 30*time.Second,
		chromedp.Navigate(srv.URL+"/graphql?run=1&query="+url.QueryEscape(query)))
	// run=1 has pressed the execute button; while the subscription runs it
	// is GraphiQL's stop button.
	step("waiting for the explorer to subscribe", 30*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`.graphiql-execute-button[aria-label^="Stop"]`)))
	// The page shows the stop button as soon as it asks to subscribe; the
	// message must be committed after the server follows the topic, or it
	// would be before the subscription's start (the server's "now").
	waitSubscribed(t, srv, 1)

	text := fmt.Sprintf("grüße aus dem Explorer %d ✓", time.Now().UnixNano())
	row := appendMessages(t, b, liveRow{Topic: 7, Text: text})[0]
	if row.Seq != 6 {
		t.Fatalf("the new message of 0.0.7 got sequence number %d, want 6 (the fixture has 5)", row.Seq)
	}
	step("waiting for the message in the result pane", 20*time.Second,
		chromedp.Poll[chromedp.Void](
			fmt.Sprintf(`(document.querySelector('.graphiql-response') || document.body).innerText.includes(%q)`, text),
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	// The pane shows the whole event, its sequence number too (a Long:
	// a JSON number, or a string were it ever too large for one).
	step("reading the result pane", 5*time.Second, chromedp.Poll[chromedp.Void](
		`document.querySelector('.graphiql-response').innerText.includes('"sequenceNumber": "6"') ||
			document.querySelector('.graphiql-response').innerText.includes('"sequenceNumber": 6')`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)))

	if dir := os.Getenv("MIRRORQL_TEST_SCREENSHOT_DIR"); dir != "" {
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "explorer-subscription.png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", file)
	}

	traffic.check(t, base.Host)
}

// resultPane is the text of GraphiQL's result pane (or of the page, before
// GraphiQL has drawn one), for a failure's message.
func resultPane(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, 2*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`(document.querySelector('.graphiql-response') || document.body).innerText`))
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	return gqlTail(text, 2000)
}

// chromiumForLiveTest finds Chromium (Debian package `chromium`). In CI
// (CI set) a missing browser fails the test: nothing the tests need is
// optional there. Elsewhere the test is skipped.
func chromiumForLiveTest(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const missing = "chromium is not installed: install the Debian package chromium " +
		"(apt-get install -y --no-install-recommends chromium), which provides /usr/bin/chromium"
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal(missing)
	}
	t.Skip(missing + "; skipping the live browser test")
	return ""
}

// pageTraffic records, from the tab's DevTools events, what the page loads
// and connects to, and what it reports on its console.
type pageTraffic struct {
	mu       sync.Mutex
	requests []string // every URL the page requested, WebSockets included
	sockets  []string // WebSocket URLs
	sent     []string // text frames the page sent on its WebSockets
	problems []string // CSP reports, failed loads, uncaught exceptions, console errors
}

// observe is a chromedp listener: it runs in the tab's read loop, so it
// only records.
func (p *pageTraffic) observe(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *network.EventWebSocketCreated:
		p.requests = append(p.requests, ev.URL)
		p.sockets = append(p.sockets, ev.URL)
	case *network.EventWebSocketFrameSent:
		if ev.Response != nil && ev.Response.Opcode == 1 {
			p.sent = append(p.sent, string(ev.Response.PayloadData))
		}
	case *network.EventWebSocketFrameError:
		p.problems = append(p.problems, "WebSocket frame error: "+ev.ErrorMessage)
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			p.problems = append(p.problems, fmt.Sprintf("loading failed (%s): %s %s", ev.Type, ev.ErrorText, ev.BlockedReason))
		}
	case *log.EventEntryAdded:
		// The browser asks for /favicon.ico on its own, and the service
		// has none: that 404 is not the page's.
		if e := ev.Entry; e != nil && !strings.HasSuffix(e.URL, "/favicon.ico") &&
			(e.Level == log.EntryLevelError || strings.Contains(e.Text, "Content Security Policy")) {
			p.problems = append(p.problems, fmt.Sprintf("console (%s): %s %s", e.Source, e.Text, e.URL))
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			p.problems = append(p.problems, "console.error: "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			p.problems = append(p.problems, "uncaught exception: "+msg)
		}
	}
}

// check fails t for a request to any host but host (data: URLs, the images
// and fonts inlined in graphiql.min.css, go nowhere), for no subscription
// over a WebSocket to the endpoint, and for any problem the page reported.
func (p *pageTraffic) check(t *testing.T, host string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range p.requests {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			t.Errorf("the page requested %q, which is no URL: %v", raw, err)
		case u.Scheme == "data":
		case u.Host != host || (u.Scheme != "http" && u.Scheme != "ws"):
			t.Errorf("the page requested %s: only %s (http and ws) is allowed", gqlTail(raw, 200), host)
		}
	}
	want := "ws://" + host + "/graphql"
	if len(p.sockets) != 1 || p.sockets[0] != want {
		t.Errorf("the page opened WebSockets %q, want one to %s", p.sockets, want)
	}
	subscribed := false
	for _, f := range p.sent {
		subscribed = subscribed || strings.Contains(f, `"type":"subscribe"`) && strings.Contains(f, "topicMessages")
	}
	if !subscribed {
		t.Errorf("the page sent no graphql-transport-ws subscribe message; frames sent: %q", p.sent)
	}
	for _, problem := range p.problems {
		t.Errorf("the page reported: %s", problem)
	}
	if t.Failed() {
		t.Logf("requests of the page:\n%s", p.listRequests())
	}
}

// listRequests is the requests one a line, data: URLs cut short.
func (p *pageTraffic) listRequests() string {
	var b strings.Builder
	for _, r := range p.requests {
		if len(r) > 80 && strings.HasPrefix(r, "data:") {
			r = r[:80] + "…"
		}
		b.WriteString(r + "\n")
	}
	return b.String()
}

// report is what the page did so far, for a step that timed out.
func (p *pageTraffic) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("requests:\n%sWebSockets: %q\nframes sent: %q\nproblems: %q", p.listRequests(), p.sockets, p.sent, p.problems)
}
