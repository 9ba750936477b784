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

	"mirrorql/tests/prereq"
)

// The browser tests' Chromium: found, never installed by a test (.ci/run
// installs it), started headless with no network traffic of its own, and
// driven over the DevTools protocol (chromedp) with what the page does
// recorded.

// skipOrFailInCI ends a test that lacks something it needs, saying why: in
// CI (CI set, and not to false or 0) it fails, since nothing the tests need
// is optional there; elsewhere the test is skipped.
func skipOrFailInCI(t testing.TB, why string) {
	t.Helper()
	prereq.Missing(t, why)
}

// chromiumPath finds Chromium (Debian package chromium); without it the
// test fails in CI and is skipped elsewhere (skipOrFailInCI).
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	skipOrFailInCI(t, "chromium is not installed: install the Debian package chromium "+
		"(apt-get install -y --no-install-recommends chromium), which provides /usr/bin/chromium")
	return ""
}

// browserSlot lets one browser test drive Chromium at a time, while the
// other tests run beside it: a page that starts GraphiQL needs seconds of CPU,
// and the explorer's run=1 gives up pressing its button after 10 s.
var browserSlot = make(chan struct{}, 1)

// oneBrowserAtATime waits for the browser slot and holds it until the test
// ends.
func oneBrowserAtATime(t *testing.T) {
	t.Helper()
	browserSlot <- struct{}{}
	t.Cleanup(func() { <-browserSlot })
}

// chromiumSwitches are the switches, besides headless, that every browser
// test starts Chromium with: among them, none of its own network traffic
// (QUIC, background networking, component updates, sync), so that every
// request it makes is the page's.
var chromiumSwitches = []string{
	"no-sandbox", "disable-gpu", "no-first-run", "disable-quic", "disable-background-networking",
	"disable-component-update", "disable-sync", "disable-dev-shm-usage",
}

// browserTab is the one tab of a headless Chromium of the test's own.
type browserTab struct {
	t   *testing.T
	ctx context.Context // the tab's; the browser lives as long as it
	// explain, when set, is what a failed step adds to its message: what
	// the page did so far.
	explain func() string
}

// newBrowserTab starts Chromium with a window of width × height and opens
// a tab; listen sees every DevTools event of the tab from its first command
// (the navigation's own request too). The browser stops at
// cleanup, before t.TempDir removes its profile.
func newBrowserTab(t *testing.T, width, height int, listen func(ev any)) *browserTab {
	t.Helper()
	chromium := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}
	for _, s := range chromiumSwitches {
		opts = append(opts, chromedp.Flag(s, true))
	}
	alloc, stopBrowser := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(stopBrowser)
	tab, closeTab := chromedp.NewContext(alloc, chromedp.WithListener(listen))
	t.Cleanup(closeTab)
	// The first run starts the browser, which lives as long as its context:
	// no timeout on this one, one per step.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return &browserTab{t: t, ctx: tab}
}

// step runs a within limit; it fails the test otherwise.
func (b *browserTab) step(what string, limit time.Duration, a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, limit)
	defer cancel()
	if _, err := chromedp.Run(ctx, a); err != nil {
		explain := ""
		if b.explain != nil {
			explain = "\n" + b.explain()
		}
		b.t.Fatalf("%s: %v%s", what, err, explain)
	}
}

// until waits for a JavaScript expression to be true.
func (b *browserTab) until(what, expr string, limit time.Duration) {
	b.t.Helper()
	b.step(what, limit+time.Second, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(limit)))
}

// eval is the value of a JavaScript expression that gives a string.
func (b *browserTab) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, patience)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// screenshotDir is where the browser tests keep screenshots, when set.
func screenshotDir() string { return os.Getenv("MIRRORQL_TEST_SCREENSHOT_DIR") }

// screenshot writes what the tab shows as name (a PNG) into screenshotDir,
// and nothing when that is not set.
func (b *browserTab) screenshot(name string) {
	b.t.Helper()
	dir := screenshotDir()
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, patience)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", file)
}

// pageTraffic records, from a tab's DevTools events, what the page loads
// and connects to, what it sends on its WebSockets, and what it reports as
// a problem. While failures are expected (the test cut the page off),
// failed connections and loads are set apart instead.
type pageTraffic struct {
	mu       sync.Mutex
	requests []string // every URL the page requested, WebSockets included
	sockets  []string // WebSocket URLs
	sent     []string // text frames the page sent on its WebSockets
	problems []string // CSP reports, failed loads, uncaught exceptions, console errors and warnings
	expected []string // failures while they were expected
	failing  bool
}

// expectFailures sets whether failed connections and loads are expected.
func (p *pageTraffic) expectFailures(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = on
}

func (p *pageTraffic) problem(s string) {
	if p.failing && (strings.Contains(s, "WebSocket") || strings.Contains(s, "ERR_CONNECTION") ||
		strings.Contains(s, "ERR_EMPTY_RESPONSE") || strings.Contains(s, "net::")) {
		p.expected = append(p.expected, s)
		return
	}
	p.problems = append(p.problems, s)
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
		p.problem("WebSocket frame error: " + ev.ErrorMessage)
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			p.problem(fmt.Sprintf("loading failed (%s): %s %s", ev.Type, ev.ErrorText, ev.BlockedReason))
		}
	case *log.EventEntryAdded:
		// The browser asks for /favicon.ico on its own when a page names
		// no icon, and the service has none: that 404 is not the page's.
		if e := ev.Entry; e != nil && !strings.HasSuffix(e.URL, "/favicon.ico") &&
			(e.Level == log.EntryLevelError || strings.Contains(e.Text, "Content Security Policy")) {
			p.problem(fmt.Sprintf("console (%s): %s %s", e.Source, e.Text, e.URL))
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			p.problem(fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			p.problem("uncaught exception: " + msg)
		}
	}
}

// check fails t for a request to anything but host over http or ws (data:
// URLs go nowhere: whether the page may use them is its policy's to say, and
// a refusal is a problem), for a WebSocket to anything but the GraphQL
// endpoint, and for every problem the page reported outside the expected
// failures.
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
	for _, s := range p.sockets {
		if s != "ws://"+host+"/graphql" {
			t.Errorf("the page opened a WebSocket to %s, want ws://%s/graphql", s, host)
		}
	}
	for _, problem := range p.problems {
		t.Errorf("the page reported: %s", problem)
	}
	t.Logf("the page made %d requests (%d WebSockets); %d expected failures", len(p.requests), len(p.sockets), len(p.expected))
	if t.Failed() {
		t.Logf("requests of the page:\n%s", p.listRequests())
	}
}

// webSockets are the URLs of the WebSockets the page opened so far.
func (p *pageTraffic) webSockets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sockets...)
}

// framesSent are the text frames the page sent on its WebSockets so far.
func (p *pageTraffic) framesSent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
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

// report is what the page did so far, for a step that failed.
func (p *pageTraffic) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("requests:\n%sWebSockets: %q\nframes sent: %q\nproblems: %q\nexpected failures: %q",
		p.listRequests(), p.sockets, p.sent, p.problems, p.expected)
}
