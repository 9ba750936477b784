package rest

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestJSONString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "abc", `"abc"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"other controls", "\x00\x1f\x7f", `"\u0000\u001f\u007f"`},
		{"html stays", "<a&b>", `"<a&b>"`},
		{"json2 escapable", "\u00ad\u200c\u2028\ufeff\ufffd", `"\u00ad\u200c\u2028\ufeff\ufffd"`},
		{"other unicode stays", "héllo 😀", `"héllo 😀"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &jsonBuf{}
			j.str(tt.in)
			if string(j.b) != tt.want {
				t.Errorf("got %s, want %s", j.b, tt.want)
			}
		})
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"\\", "\x00\u2028", "\xff\xfe", "😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		j := &jsonBuf{}
		j.str(s)
		var back string
		if err := json.Unmarshal(j.b, &back); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s: %v", s, j.b, err)
		}
		if back != s {
			t.Fatalf("round trip %q -> %s -> %q", s, j.b, back)
		}
	})
}
