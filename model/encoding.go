package model

import (
	"encoding/base64"
	"unicode/utf8"
)

// Base64 is the standard padded alphabet every bytea column is rendered in.
func Base64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// PostgresBase64 reproduces PostgreSQL's encode(x, 'base64'), which ends every
// full 76-character line with a line feed; the mirror node returns signatures
// in that form (docs/reference/behavior.md §6.2). PostgreSQL writes the line feed as soon as a
// line is full, so an input whose length is a multiple of 57 bytes ends with one.
func PostgresBase64(b []byte) string {
	const lineBytes = 57 // 76 characters
	if len(b) < lineBytes {
		return base64.StdEncoding.EncodeToString(b)
	}
	full := len(b) / lineBytes
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+full)
	for i := 0; i < full; i++ {
		out = base64.StdEncoding.AppendEncode(out, b[i*lineBytes:(i+1)*lineBytes])
		out = append(out, '\n')
	}
	out = base64.StdEncoding.AppendEncode(out, b[full*lineBytes:])
	return string(out)
}

// DecodeUTF8 decodes bytes the way Node's Buffer.toString('utf-8') does: the
// WHATWG decoder, which replaces each maximal invalid subsequence with one
// U+FFFD (Go's own conversion would emit one per byte).
func DecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out = append(out, c)
			i++
			continue
		}
		need, lower, upper := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lower = 0xA0
			} else if c == 0xED {
				upper = 0x9F
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lower = 0x90
			} else if c == 0xF4 {
				upper = 0x8F
			}
		default:
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				break
			}
			lower, upper = 0x80, 0xBF
			j++
		}
		if j-i == need+1 {
			out = append(out, b[i:j]...)
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
		i = j
	}
	return string(out)
}
