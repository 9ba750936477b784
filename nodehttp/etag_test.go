package nodehttp

import "testing"

func TestWeakETag(t *testing.T) {
	// the etag package's value for the body "hello"
	if got, want := WeakETag([]byte("hello")), `W/"5-qvTGHdzF6KLavt4PO0gs2a6pQ00"`; got != want {
		t.Errorf("WeakETag = %s, want %s", got, want)
	}
}

func TestETagMatches(t *testing.T) {
	tests := []struct {
		name, header string
		want         bool
	}{
		{"weak", `W/"5-x"`, true},
		{"strong form of the same tag", `"5-x"`, true},
		{"in a list", `"a", W/"5-x"`, true},
		{"any", "*", true},
		{"another tag", `W/"6-x"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ETagMatches(tt.header, `W/"5-x"`); got != tt.want {
				t.Errorf("ETagMatches(%q) = %v", tt.header, got)
			}
		})
	}
}
