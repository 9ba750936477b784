package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://mirror:s3cr3t@db:5432/mirror_node?sslmode=disable", "postgres://mirror:xxxxx@db:5432/mirror_node?sslmode=disable"},
		{"postgres://mirror@db/mirror_node", "postgres://mirror@db/mirror_node"},
		{"postgres://db/mirror_node", "postgres://db/mirror_node"},
		{"postgresql://u:p%40ss%2Fword@db/x", "postgresql://u:xxxxx@db/x"},
		{"postgres://u:p@ss@db/x", "postgres://u:xxxxx@db/x"},
		{"postgres://u@db/x?password=s3cr3t&sslmode=disable", "postgres://u@db/x?password=xxxxx&sslmode=disable"},
		{"postgres://u:s3cr3t@db:badport/x", "postgres://xxxxx"},
		{"host=db user=u password=s3cr3t dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"host=db password = 'se cr\\'et' dbname=x", "host=db password = xxxxx dbname=x"},
		{"redis://:s3cr3t@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		{"", ""},
	} {
		got := URL(c.in)
		if got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "s3cr3t") || strings.Contains(got, "cr\\'et") {
			t.Errorf("URL(%q) leaks the password: %q", c.in, got)
		}
	}
}

func TestSecret(t *testing.T) {
	for _, c := range []struct{ dsn, msg string }{
		{"postgres://u:s3cr3t@db:badport/x", `parse "postgres://u:s3cr3t@db:badport/x": invalid port`},
		{"postgres://u:s3%2Fcr3t@db:badport/x", `parse "postgres://u:s3%2Fcr3t@db:badport/x" (s3/cr3t)`},
		{"postgres://u:a/b@c@db/x", "connect postgres://u:a/b@c@db/x"},
		{"postgres://u@db/x?password=s3cr3t&sslmode=bogus", "bad: password=s3cr3t&sslmode=bogus"},
		{"host=db password='s3cr3t' user=u", "cannot use password s3cr3t"},
	} {
		got := Secret(c.msg, c.dsn)
		for _, leak := range []string{"s3cr3t", "s3%2Fcr3t", "s3/cr3t", "a/b@c"} {
			if strings.Contains(got, leak) {
				t.Errorf("Secret(%q, %q) = %q still holds %q", c.msg, c.dsn, got, leak)
			}
		}
		if !strings.Contains(got, Mask) {
			t.Errorf("Secret(%q, %q) = %q has no mask", c.msg, c.dsn, got)
		}
	}
	// A parser that stops at the password's @ masks its start and quotes
	// the rest (pgx: "unexpected spaces found in ...").
	dsn := "postgres://u:s3cret:P@ss wörd@db/x"
	msg := "cannot parse `postgres://u:xxxxx@ss wörd@db/x`: failed to parse as URL (unexpected spaces found in \"ss wörd@db\")"
	if got := Secret(msg, dsn); strings.Contains(got, "ss w") || strings.Contains(got, "wörd") {
		t.Errorf("Secret(%q) = %q still holds a piece of the password", msg, got)
	}
	if got := Secret("no password here", "postgres://u@db/x"); got != "no password here" {
		t.Errorf("changed a message without a password: %q", got)
	}
}

func TestFragments(t *testing.T) {
	for _, c := range []struct{ msg, password, want string }{
		{"a secret here", "secret", "a xxxxx here"},
		{`found "ss wörd@db"`, "P@ss wörd", `found "xxxxx@db"`},
		{"abc", "abc", "abc"},                    // shorter than a fragment
		{"pas or wor", "password", "pas or wor"}, // no run of four
		{"", "password", ""},
		{"password", "", "password"},
	} {
		if got := Fragments(c.msg, c.password); got != c.want {
			t.Errorf("Fragments(%q, %q) = %q, want %q", c.msg, c.password, got, c.want)
		}
	}
}

// FuzzFragments: no run of MinFragment bytes of the password is left in the
// message, whatever the message holds around pieces of it.
func FuzzFragments(f *testing.F) {
	f.Add("cannot parse `postgres://u:xxxxx@ss:w/rd#1?x%&y=z@db`", "p@ss:w/rd#1?x%&y=z", 3, 9)
	f.Add("abcabcabc", "bcab", 0, 4)
	f.Fuzz(func(t *testing.T, msg, password string, i, j int) {
		if i >= 0 && j >= i && j <= len(password) {
			msg += password[i:j] + msg // a piece of the password inside
		}
		got := Fragments(msg, password)
		for k := 0; k+MinFragment <= len(password); k++ {
			piece := password[k : k+MinFragment]
			if strings.Contains(got, piece) && !strings.Contains(Mask, piece) && !strings.ContainsRune(piece, 'x') {
				t.Fatalf("Fragments(%q, %q) = %q holds %q", msg, password, got, piece)
			}
		}
	})
}
