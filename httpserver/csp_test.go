package httpserver

import "testing"

// TestSameOriginPolicy: the page may connect to its own host over HTTP and
// WebSocket, and nowhere else; a Host that is not a plain host[:port] is
// left to 'self' rather than written into the header.
func TestSameOriginPolicy(t *testing.T) {
	const rest = "; img-src 'self'; object-src 'none'"
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
			if got := SameOriginPolicy(tc.host, "img-src 'self'", "object-src 'none'"); got != tc.want {
				t.Errorf("SameOriginPolicy(%q)\n got %s\nwant %s", tc.host, got, tc.want)
			}
		})
	}
	if got, want := SameOriginPolicy("a.example"), "default-src 'self'; connect-src 'self' ws://a.example wss://a.example"; got != want {
		t.Errorf("no further directives: %s, want %s", got, want)
	}
}
