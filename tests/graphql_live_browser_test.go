package tests

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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
	t.Parallel()
	chromiumPath(t) // without it: skipped (failed in CI) before any setup
	oneBrowserAtATime(t)
	srv, b := gqlFixtureServer(t)
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	traffic := &pageTraffic{}
	tab := newBrowserTab(t, 1280, 800, traffic.observe)
	tab.explain = func() string { return traffic.report() + "\nresult pane: " + resultPane(tab.ctx) }

	query := `subscription { topicMessages(topicId: "0.0.7") { sequenceNumber message(encoding: UTF8) } }`
	tab.step("opening the explorer", patience,
		chromedp.Navigate(srv.URL+"/graphql?run=1&query="+url.QueryEscape(query)))
	// run=1 has pressed the execute button; while the subscription runs it
	// is GraphiQL's stop button.
	tab.step("waiting for the explorer to subscribe", patience,
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
	tab.until("waiting for the message in the result pane",
		fmt.Sprintf(`(document.querySelector('.graphiql-response') || document.body).innerText.includes(%q)`, text), patience)
	// The pane shows the whole event, its sequence number too (a Long:
	// a JSON number, or a string were it ever too large for one).
	tab.until("reading the result pane",
		`document.querySelector('.graphiql-response').innerText.includes('"sequenceNumber": "6"') ||
			document.querySelector('.graphiql-response').innerText.includes('"sequenceNumber": 6')`, patience)
	tab.screenshot("explorer-subscription.png")

	traffic.check(t, base.Host)
	if sockets := traffic.webSockets(); len(sockets) != 1 {
		t.Errorf("the page opened WebSockets %q, want one", sockets)
	}
	subscribed := false
	for _, f := range traffic.framesSent() {
		subscribed = subscribed || strings.Contains(f, `"type":"subscribe"`) && strings.Contains(f, "topicMessages")
	}
	if !subscribed {
		t.Errorf("the page sent no graphql-transport-ws subscribe message; frames sent: %q", traffic.framesSent())
	}
}

// resultPane is the text of GraphiQL's result pane (or of the page, before
// GraphiQL has drawn one), for a failure's message.
func resultPane(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, patience)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`(document.querySelector('.graphiql-response') || document.body).innerText`))
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	return gqlTail(text, 2000)
}
