// Package redact keeps database passwords out of what the service prints:
// URL makes a connection string fit to print, Secret scrubs a connection
// string's password out of any message (a driver's error, a panic).
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every password.
const Mask = "xxxxx"

// URL returns a connection string fit to print: the password of a URL, in
// its user information or in a password= query parameter, or of a
// key=value string ("host=... password=...") is replaced by Mask. A URL that
// does not parse is redacted whole after its scheme, since it may hold a
// password anywhere.
func URL(raw string) string {
	if !strings.Contains(raw, "://") {
		return kvPassword.ReplaceAllString(raw, "${1}"+Mask)
	}
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://" + Mask
	}
	// url.URL.Redacted masks the user information's password (with Mask's
	// very "xxxxx"); libpq also takes one as a query parameter.
	if q := u.Query(); q.Has("password") {
		q.Set("password", Mask)
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Secret replaces, in msg, every occurrence of the password that the
// connection string dsn holds (as written, and unescaped) by Mask, and then
// every run of its bytes long enough to tell (Fragments): a parser that
// stops at a password's @ or space quotes the rest of it, or masks only
// its start. It works on connection strings that do not parse as URLs,
// whose errors are the likeliest to quote them.
func Secret(msg, dsn string) string {
	ps := passwords(dsn)
	for _, p := range ps {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, Mask)
		}
	}
	for _, p := range ps {
		msg = Fragments(msg, p)
	}
	return msg
}

// MinFragment is the shortest run of a password's bytes that Fragments
// masks: shorter ones occur in any message.
const MinFragment = 4

// Fragments replaces, in msg, every run of at least MinFragment bytes that
// password holds too, the longest first from the left, by Mask.
func Fragments(msg, password string) string {
	if len(password) < MinFragment || len(msg) < MinFragment {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		n := 0
		for l := MinFragment; i+l <= len(msg) && strings.Contains(password, msg[i:i+l]); l++ {
			n = l
		}
		if n == 0 {
			b.WriteByte(msg[i])
			i++
			continue
		}
		b.WriteString(Mask)
		i += n
	}
	return b.String()
}

// passwords finds the password(s) in dsn without relying on it parsing.
func passwords(dsn string) []string {
	var out []string
	add := func(p string) {
		out = append(out, p)
		if un, err := url.PathUnescape(p); err == nil && un != p {
			out = append(out, un)
		}
		if un, err := url.QueryUnescape(p); err == nil && un != p {
			out = append(out, un)
		}
	}
	if _, rest, ok := strings.Cut(dsn, "://"); ok {
		// The user information ends at the last @ (a password may hold / or @).
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				add(pw)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		v := strings.TrimPrefix(m[2], "=") // a URL query's password=... too
		add(strings.Trim(v, "'"))
		if i := strings.IndexAny(v, "&#"); i >= 0 {
			add(v[:i])
		}
	}
	// Longest first, so a password is not half-replaced by a shorter form.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// kvPassword is a password in a key=value connection string: bare, or quoted
// with backslash escapes.
var kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)`)
