// Package nodehttp is what the mirror node's Node service (Express) writes
// that mirrorql's answers must match byte for byte, wherever they are made:
// JSON strings escaped as its serializer escapes them and its error body
// (json.go), which middleware outside the REST face (limits, the policy)
// answers with too; and its entity tags, which the REST handlers make and
// the response cache replays (etag.go). It sits below all of them so that
// none depends on the REST face for these bytes.
package nodehttp

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string escaped as the mirror node's
// json-bigint serializer (Crockford's json2) escapes: quote, backslash, the
// C0 and C1 controls and a set of invisible or separator code points, as
// \uXXXX.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = unicodeEscape(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if json2Escapes(r) {
			b = append(b, s[start:i]...)
			b = unicodeEscape(b, r)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func unicodeEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// json2Escapes is json2's `escapable` class above ASCII.
func json2Escapes(r rune) bool {
	switch {
	case r >= 0x7f && r <= 0x9f, r == 0xad, r >= 0x600 && r <= 0x604, r == 0x70f, r == 0x17b4, r == 0x17b5,
		r >= 0x200c && r <= 0x200f, r >= 0x2028 && r <= 0x202f, r >= 0x2060 && r <= 0x206f,
		r == 0xfeff, r >= 0xfff0 && r <= 0xffff:
		return true
	}
	return false
}

// AppendError appends the Node service's error body:
// {"_status":{"messages":[{"message":...},...]}}.
func AppendError(b []byte, messages ...string) []byte {
	b = append(b, `{"_status":{"messages":[`...)
	for i, m := range messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"message":`...)
		b = AppendString(b, m)
		b = append(b, '}')
	}
	return append(b, `]}}`...)
}

// ContentType is the Node service's JSON content type.
const ContentType = "application/json; charset=utf-8"
