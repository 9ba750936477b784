package rest

import (
	"encoding/base64"
	"slices"
)

func base64Append(dst, src []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(src))
	dst = slices.Grow(dst, n)[:len(dst)+n]
	base64.StdEncoding.Encode(dst[len(dst)-n:], src)
	return dst
}
