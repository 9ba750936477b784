package httpserver

// The Content-Security-Policy of the service's own pages (the GraphiQL
// explorer, the dashboard): each holds its page to the host it was loaded
// from, WebSockets included.

import (
	"regexp"
	"strings"
)

// SameOriginPolicy is a policy with default-src 'self', a connect-src of the page's
// own host over HTTP and WebSocket, and then directives, in that order.
// 'self' covers ws: and wss: of the page's host only in browsers that follow
// CSP level 3, so host, the Host the browser asked for, is named as well
// when it is a plain host[:port]; anything else (an IPv6 literal, or text
// that could end the directive) is left to 'self' rather than written into
// the header.
func SameOriginPolicy(host string, directives ...string) string {
	connect := "connect-src 'self'"
	if plainHost.MatchString(host) {
		connect += " ws://" + host + " wss://" + host
	}
	return strings.Join(append([]string{"default-src 'self'", connect}, directives...), "; ")
}

// plainHost is a host-source of CSP's grammar with a port: a name or IPv4
// address (an IPv6 literal cannot be written there).
var plainHost = regexp.MustCompile(`^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::[0-9]{1,5})?$`)
