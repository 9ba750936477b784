package graph

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/websocket"
)

func closeFrame(code uint16, reason string) []byte {
	b := []byte{0x88, byte(2 + len(reason)), 0, 0}
	binary.BigEndian.PutUint16(b[2:], code)
	return append(b, reason...)
}

func TestGoingAwayFrame(t *testing.T) {
	t.Parallel()
	goingAway := closeFrame(websocket.CloseGoingAway, "server shutting down")
	cases := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"normal closure", closeFrame(websocket.CloseNormalClosure, "terminated"), goingAway},
		{"protocol error", closeFrame(websocket.CloseProtocolError, "x"), goingAway},
		{"no reason", closeFrame(websocket.CloseNormalClosure, ""), goingAway},
		{"text frame", []byte{0x81, 2, 'h', 'i'}, []byte{0x81, 2, 'h', 'i'}},
		{"ping", []byte{0x89, 0}, []byte{0x89, 0}},
		{"masked close", []byte{0x88, 0x82, 1, 2, 3, 4, 5, 6}, []byte{0x88, 0x82, 1, 2, 3, 4, 5, 6}},
		{"close split over writes", closeFrame(1000, "terminated")[:5], closeFrame(1000, "terminated")[:5]},
		{"close and more", append(closeFrame(1000, ""), 0x81, 0), append(closeFrame(1000, ""), 0x81, 0)},
		{"empty", nil, nil},
	}
	for _, tc := range cases {
		if got := goingAwayFrame(tc.in); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.want)
		}
	}
}

// FuzzGoingAwayFrame: whatever is written, the rewrite changes only a whole
// unmasked close frame, into a well-formed 1001 close frame.
func FuzzGoingAwayFrame(f *testing.F) {
	f.Add(closeFrame(1000, "terminated"))
	f.Add([]byte{0x81, 2, 'h', 'i'})
	f.Add([]byte{0x88, 0x7e, 0, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := goingAwayFrame(b)
		if bytes.Equal(got, b) {
			return
		}
		if b[0] != 0x88 || b[1]&0x80 != 0 || int(b[1]) != len(b)-2 {
			t.Fatalf("rewrote % x", b)
		}
		if got[0] != 0x88 || int(got[1]) != len(got)-2 || binary.BigEndian.Uint16(got[2:]) != websocket.CloseGoingAway {
			t.Fatalf("% x became % x", b, got)
		}
	})
}

func TestOriginCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		allowed []string
		origin  string
		ok      bool
	}{
		{nil, "https://any.example", true},
		{[]string{"*"}, "https://any.example", true},
		{[]string{"https://app.example"}, "https://app.example", true},
		{[]string{"https://app.example/"}, "https://APP.example", true},
		{[]string{"https://app.example"}, "https://other.example", false},
		{[]string{"https://app.example"}, "http://app.example", false},
		{[]string{"https://app.example"}, "", true}, // not a browser: no Origin to check
		{[]string{" https://a.example ", "http://localhost:3000"}, "http://localhost:3000", true},
		{[]string{"", " "}, "https://any.example", true},
		{[]string{"https://app.example"}, "http://example.com", true}, // the service's own pages
		{[]string{"https://app.example"}, "http://EXAMPLE.com:80", false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := originCheck(tc.allowed)(r); got != tc.ok {
			t.Errorf("allowed %q, origin %q: %v, want %v", tc.allowed, tc.origin, got, tc.ok)
		}
	}
}

func TestIsStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, path, upgrade, accept string
		want                          bool
	}{
		{"GET", "/graphql", "websocket", "", true},
		{"POST", "/graphql", "", "text/event-stream", true},
		{"POST", "/graphql", "", "application/json, text/event-stream;q=0.5", true},
		{"GET", "/graphql", "", "text/event-stream", false},
		{"POST", "/graphql", "", "application/json", false},
		{"POST", "/api/v1/topics", "", "text/event-stream", false},
		{"GET", "/graphql/explorer/x.js", "websocket", "", false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		r.Header.Set("Upgrade", tc.upgrade)
		r.Header.Set("Accept", tc.accept)
		if got := IsStream(r); got != tc.want {
			t.Errorf("%s %s upgrade %q accept %q: %v", tc.method, tc.path, tc.upgrade, tc.accept, got)
		}
	}
}
