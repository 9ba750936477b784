package etag

import "testing"

func TestWeak(t *testing.T) {
	// the etag package's value for the body "hello"
	if got, want := Weak([]byte("hello")), `W/"5-qvTGHdzF6KLavt4PO0gs2a6pQ00"`; got != want {
		t.Errorf("Weak = %s, want %s", got, want)
	}
}

func TestMatches(t *testing.T) {
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
			if got := Matches(tt.header, `W/"5-x"`); got != tt.want {
				t.Errorf("Matches(%q) = %v", tt.header, got)
			}
		})
	}
}
