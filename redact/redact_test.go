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
	if got := Secret("no password here", "postgres://u@db/x"); got != "no password here" {
		t.Errorf("changed a message without a password: %q", got)
	}
}
