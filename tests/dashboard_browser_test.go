package tests

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
)

// dashTopic is the topic the browser test follows: a topic of its own with
// messages in the last hour, beside the demo's data set (0.0.2001 on), so
// that it comes first in the topic list.
const dashTopic = 900

// TestDashboardInBrowser drives the dashboard of the built service in
// headless Chromium over the DevTools protocol, the way a newcomer uses it:
// the topic list (and how long it takes to appear), the search box with an
// unknown and a malformed id and then a real one, the topic's message count,
// its activity chart in each range, the live feed receiving a new message,
// the encoding switch, and a lost connection: while the page cannot reach
// the service it says so, messages committed meanwhile appear once it can
// again, with no gap and no duplicate. The page is loaded through a TCP
// proxy that the test can cut. Every request the page makes, WebSockets
// included, must go to that one host, and the page must report no
// Content-Security-Policy violation, failed load or uncaught exception.
//
// With MIRRORQL_TEST_SCREENSHOT_DIR set it writes dashboard.png (1280 wide)
// and dashboard-phone.png (390 wide) of the topic view there.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // without it: skipped (failed in CI) before any setup
	oneBrowserAtATime(t)
	dbURL, b := testdb.New(t)
	ctx := context.Background()
	if _, err := seed.RunURL(ctx, dbURL, seed.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	liveTopic(t, b, dashTopic)
	now := time.Now()
	created := now.Add(-3 * time.Hour).UnixNano()
	for _, stmt := range []string{
		// keys and fees of a demo topic, so the details have something to show
		`UPDATE topic SET admin_key = s.admin_key, submit_key = s.submit_key, fee_schedule_key = s.fee_schedule_key,
			created_timestamp = ? FROM topic s WHERE topic.id = ? AND s.id = 2004`,
		`UPDATE entity SET memo = 'Greenhouse sensors – building 7', auto_renew_account_id = 1022,
			auto_renew_period = 7776000, created_timestamp = ? WHERE id = ?`,
		`INSERT INTO custom_fee (fixed_fees, timestamp_range, entity_id)
			SELECT fixed_fees, timestamp_range, ? FROM custom_fee WHERE entity_id = 2004`,
	} {
		args := []any{created, dashTopic}
		if strings.HasPrefix(stmt, "INSERT") {
			args = []any{dashTopic}
		}
		if _, err := b.ExecContext(ctx, stmt, args...); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// five messages in the last hour, ten minutes apart
	var seeded []liveRow
	for i, text := range []string{
		"temperature 21.4 °C", `{"sensor":"humidity","value":0.61}`, "temperature 21.9 °C",
		"door opened ✓", `{"sensor":"co2","ppm":612,"note":"Grüße"}`,
	} {
		seeded = append(seeded, liveRow{Topic: dashTopic, Ts: now.Add(time.Duration(i*10-55) * time.Minute).UnixNano(), Text: text})
	}
	appendMessages(t, b, seeded...)

	srv := startServer(t, dbURL)
	proxy := newCutProxy(t, strings.TrimPrefix(srv.URL, "http://"))
	base := "http://" + proxy.addr()

	traffic := &pageTraffic{}
	tab := newBrowserTab(t, 1280, 900, traffic.observe)
	tab.explain = traffic.report
	search := func(id string) {
		t.Helper()
		tab.step("searching "+id, patience, chromedp.Steps(
			chromedp.Evaluate[chromedp.Void](`document.getElementById('search-id').value = ''`),
			chromedp.SendKeys(chromedp.CSS("#search-id"), id+"\r"),
		))
	}
	row := fmt.Sprintf(`#topics tr[data-topic="0.0.%d"]`, dashTopic)

	// --- the topic list, and how long it takes ---
	tab.step("opening the dashboard", patience, chromedp.Navigate(base+"/dashboard"))
	tab.until("waiting for the topic list", `document.querySelector('`+row+`') !== null`, patience)
	// The page marks the list in the frame after it is in the document
	// (requestAnimationFrame), so the mark can come a frame after the row.
	tab.until("waiting for the page's mark of the topic list", `performance.getEntriesByName('dashboard:topics-rendered').length > 0`, patience)
	// Times from navigation start (performance.now()'s origin), in ms: the
	// page's own mark once the first page of topics is in the document, the
	// arrival of the HTML and of the page's script, DOMContentLoaded, and the
	// topics query.
	timing := tab.eval(`(() => {
		const f = (v) => v === undefined ? '?' : v.toFixed(0);
		const nav = performance.getEntriesByType('navigation')[0];
		const q = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/graphql'));
		const js = performance.getEntriesByType('resource').find((r) => r.name.includes('/dashboard.js'));
		const mark = performance.getEntriesByName('dashboard:topics-rendered')[0];
		return f(mark?.startTime) + ' ms (HTML ' + f(nav.responseEnd) + ', dashboard.js ' + f(js?.responseEnd) +
			', DOMContentLoaded ' + f(nav.domContentLoadedEventEnd) + ', topics query ' + f(q?.startTime) + '–' + f(q?.responseEnd) + ')';
	})()`)
	t.Logf("navigation start to the topic list rendered: %s; %s topics", timing,
		tab.eval(`String(document.querySelectorAll('#topics tbody tr').length)`))
	// The figure is for the report (docs/dashboard.md has the usual ones);
	// the bound only catches a page that is plainly broken, not a busy
	// machine: the list is drawn from the topics query's answer, so it
	// comes no later than ten times what the page took, on this machine as
	// loaded as it is, to have that answer (navigation, HTML, script,
	// query). Later, the page sat on its data.
	rendered, err := strconv.ParseFloat(tab.eval(`String(performance.getEntriesByName('dashboard:topics-rendered')[0].startTime)`), 64)
	answered, err2 := strconv.ParseFloat(tab.eval(`String(performance.getEntriesByType('resource').find((r) => r.name.endsWith('/graphql')).responseEnd)`), 64)
	if err != nil || err2 != nil || rendered > 10*answered {
		t.Errorf("the topic list took %.0f ms to appear, the topics query's answer %.0f ms (%v, %v)", rendered, answered, err, err2)
	}
	if got := tab.eval(`document.querySelector('` + row + ` .count').textContent`); got != "5" {
		t.Errorf("the topic list gives 0.0.%d %q messages, want 5", dashTopic, got)
	}

	// --- search: unknown, malformed, then the topic ---
	search("0.0.99999")
	tab.until("an unknown id's message", `!document.getElementById('notice').hidden &&
		document.getElementById('notice-text').textContent.includes('No topic “0.0.99999”')`, patience)
	search("0.0.x")
	tab.until("a malformed id's message", `document.getElementById('notice-text').textContent.includes('“0.0.x” is not a topic id')`, patience)
	search(fmt.Sprint(dashTopic))
	tab.until("the topic view", fmt.Sprintf(`!document.getElementById('view-topic').hidden &&
		document.getElementById('t-id').textContent === 'Topic 0.0.%d' && location.hash === '#/topic/0.0.%d'`, dashTopic, dashTopic), patience)
	if !strings.EqualFold(tab.eval(`String(document.getElementById('notice').hidden)`), "true") {
		t.Errorf("the notice still shows after a topic was found: %s", tab.eval(`document.getElementById('notice-text').textContent`))
	}
	if got := tab.eval(`document.getElementById('t-count').textContent`); got != "5" {
		t.Errorf("the topic view gives %q messages, want 5", got)
	}
	if got := tab.eval(`document.getElementById('t-details').textContent`); !strings.Contains(got, "ED25519") || !strings.Contains(got, "3 ℏ") {
		t.Errorf("the details lack the admin key or the HBAR fee: %q", got)
	}

	// --- the chart: 60, 96 and 168 buckets, the five messages in each ---
	for _, r := range []struct {
		button  string
		buckets int
	}{{"hour", 60}, {"day", 96}, {"week", 168}, {"hour", 60}} {
		tab.step("choosing "+r.button, patience, chromedp.Click(chromedp.CSS(`[data-range="`+r.button+`"]`)))
		tab.until(fmt.Sprintf("the %s chart with %d buckets", r.button, r.buckets), fmt.Sprintf(`(() => {
			const c = document.getElementById('chart');
			return c.dataset.range === %q && c.dataset.buckets === '%d' && c.dataset.total === '5' && c.querySelector('canvas') !== null;
		})()`, r.button, r.buckets), patience)
	}

	// --- the feed: the five, then a new message on top ---
	feedSeqs := func() []string {
		t.Helper()
		return strings.Fields(tab.eval(`[...document.querySelectorAll('#feed li.msg')].map(li => li.dataset.seq).join(' ')`))
	}
	if got := feedSeqs(); !slices.Equal(got, []string{"5", "4", "3", "2", "1"}) {
		t.Errorf("the feed holds %v, want 5 4 3 2 1", got)
	}
	tab.until("the live feed", `document.getElementById('live').dataset.state === 'live'`, patience)
	waitSubscribed(t, srv, 1)
	text := fmt.Sprintf("live reading %d: 22.1 °C ✓", time.Now().UnixNano())
	appendMessages(t, b, liveRow{Topic: dashTopic, Text: text})
	tab.until("the new message on top of the feed", fmt.Sprintf(`(() => {
		const li = document.querySelector('#feed li.msg');
		return li && li.dataset.seq === '6' && li.querySelector('.msg-body').textContent === %q;
	})()`, text), patience)
	tab.until("the message counted", `document.getElementById('t-count').textContent === '6' &&
		document.getElementById('chart').dataset.total === '6'`, patience)
	tab.step("switching to base64", patience, chromedp.Click(chromedp.CSS(`[data-encoding="BASE64"]`)))
	if got := tab.eval(`document.querySelector('#feed li.msg .msg-body').textContent`); got != base64.StdEncoding.EncodeToString([]byte(text)) {
		t.Errorf("in base64 the new message reads %q", got)
	}
	tab.step("switching to UTF-8", patience, chromedp.Click(chromedp.CSS(`[data-encoding="UTF8"]`)))

	// --- a lost connection: shown, then caught up without gap or duplicate ---
	traffic.expectFailures(true)
	proxy.cut()
	tab.until("the page saying it reconnects", `document.getElementById('live').dataset.state === 'reconnecting'`, patience)
	waitSubscribed(t, srv, 0)
	appendMessages(t, b, liveRow{Topic: dashTopic, Text: "committed while the page was cut off (1)"})
	appendMessages(t, b, liveRow{Topic: dashTopic, Text: "committed while the page was cut off (2)"})
	// A failed retry: wait until a reconnection attempt of the page, made
	// after those commits, has been turned away (its back-off starts at 0.5 s).
	for deadline, turned := time.Now().Add(patience), proxy.turnedAway(); proxy.turnedAway() <= turned; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page made no reconnection attempt within %s of the cut", patience)
		}
	}
	proxy.restore()
	tab.until("the feed live again with what it missed", `document.getElementById('live').dataset.state === 'live' &&
		document.querySelector('#feed li.msg').dataset.seq === '8'`, patience)
	traffic.expectFailures(false)
	if got := feedSeqs(); !slices.Equal(got, []string{"8", "7", "6", "5", "4", "3", "2", "1"}) {
		t.Errorf("after the outage the feed holds %v, want 8 7 6 5 4 3 2 1", got)
	}
	appendMessages(t, b, liveRow{Topic: dashTopic, Text: "after the outage"})
	tab.until("a message after the outage", `document.querySelector('#feed li.msg').dataset.seq === '9'`, patience)

	// --- laptop and phone widths; screenshots on request ---
	// nothing wider than the window: no sideways scrolling
	fits := func(width int) string {
		return fmt.Sprintf(`document.documentElement.scrollWidth <= %d && document.querySelector('#chart canvas').getBoundingClientRect().width <= %d`, width, width)
	}
	tab.step("laptop width", patience, chromedp.EmulateViewport(1280, 900))
	tab.until("the topic view at laptop width", fits(1280), patience)
	if screenshotDir() != "" {
		// the new messages' highlight (CSS animation "fresh", 3 s) fades
		tab.until("the highlight faded", `!document.getAnimations().some(a => a.animationName === 'fresh')`, patience)
	}
	tab.screenshot("dashboard.png")
	tab.step("phone width", patience, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tab.until("the topic view at phone width", fits(390), patience)
	tab.screenshot("dashboard-phone.png")
	tab.step("opening the topic list at phone width", patience, chromedp.Click(chromedp.CSS(`.tabs a[data-view="topics"]`)))
	tab.until("the topic list at phone width", `document.querySelector('`+row+`') !== null && document.documentElement.scrollWidth <= 390`, patience)
	tab.step("laptop width", patience, chromedp.EmulateViewport(1280, 900))

	// --- schedules ---
	tab.step("opening the schedules", patience, chromedp.Click(chromedp.CSS(`.tabs a[data-view="schedules"]`)))
	tab.until("the schedules", `document.querySelectorAll('#schedules tbody tr').length === 25 &&
		document.querySelector('#schedules tbody .badge') !== null`, patience)
	if got := tab.eval(`document.getElementById('live').dataset.state`); got != "off" {
		t.Errorf("the live feed is %q after leaving the topic, want off", got)
	}
	waitSubscribed(t, srv, 0)

	traffic.check(t, proxy.addr())
	if sockets := traffic.webSockets(); len(sockets) < 2 {
		t.Errorf("the page opened %d WebSockets, want one before and at least one after the outage: %q", len(sockets), sockets)
	}
}

// TestDashboardDisabled: with MIRRORQL_DASHBOARD_ENABLED=false the page and
// its assets answer the service's usual 404.
func TestDashboardDisabled(t *testing.T) {
	t.Parallel()
	dbURL, _ := testdb.New(t)
	on := startServer(t, dbURL)
	if status, hdr, body := get(t, on.URL+"/dashboard"); status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(body), "dashboard.js") {
		t.Fatalf("enabled: /dashboard answers %d %s", status, hdr.Get("Content-Type"))
	}
	off := startServer(t, dbURL, "MIRRORQL_DASHBOARD_ENABLED=false")
	_, _, want := get(t, off.URL+"/no/such/route")
	for _, path := range []string{"/dashboard", "/dashboard/", "/dashboard/assets/dashboard.js"} {
		status, _, body := get(t, off.URL+path)
		if status != 404 || string(body) != string(want) {
			t.Errorf("disabled: %s answers %d %s, want 404 %s", path, status, body, want)
		}
	}
}

// cutProxy forwards TCP connections to a server until cut, which closes
// every connection and refuses new ones until restore: to the page, the
// service is gone for a while.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
	turned int // connections turned away while cut
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	if !p.track(c) {
		_ = c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		_ = c.Close()
		if s != nil {
			_ = s.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// track registers c, unless the proxy is cut.
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		p.turned++
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// turnedAway is how many connections the proxy refused while cut.
func (p *cutProxy) turnedAway() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.turned
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
