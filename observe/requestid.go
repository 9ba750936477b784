package observe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// HeaderRequestID carries the request id, in both directions.
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDLength bounds an id taken from a client.
const MaxRequestIDLength = 128

// SanitizeRequestID keeps a client's id only as far as it is safe to log and
// echo: the characters [A-Za-z0-9._:/+=@-] (others are dropped), at most
// MaxRequestIDLength of them. An empty result means "generate one".
func SanitizeRequestID(s string) string {
	if len(s) > 4*MaxRequestIDLength {
		s = s[:4*MaxRequestIDLength] // bound the work on absurd headers
	}
	out := make([]byte, 0, min(len(s), MaxRequestIDLength))
	for i := 0; i < len(s) && len(out) < MaxRequestIDLength; i++ {
		if c := s[i]; requestIDChar(c) {
			out = append(out, c)
		}
	}
	return string(out)
}

func requestIDChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', ':', '/', '+', '=', '@':
		return true
	}
	return false
}

// NewRequestID is 16 random bytes in hex.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type requestIDKey struct{}

// WithRequestID stores id in ctx.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id stored in ctx by the middleware ("" outside a request).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
