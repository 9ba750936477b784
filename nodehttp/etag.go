package nodehttp

// The entity tags of the service's answers as Express makes and compares
// them: the REST handlers tag their bodies and answer 304, and the response
// cache replays both the same way.

import (
	"crypto/sha1"
	"encoding/base64"
	"strconv"
	"strings"
)

// WeakETag is the tag Express's etag package gives body:
// W/"<length hex>-<sha1 base64 [:27]>".
func WeakETag(body []byte) string {
	sum := sha1.Sum(body)
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(append(b, `W/"`...), int64(len(body)), 16)
	b = append(b, '-')
	n := len(b)
	b = base64.StdEncoding.AppendEncode(b, sum[:])[:n+27]
	return string(append(b, '"'))
}

// ETagMatches is If-None-Match against an ETag, by weak comparison (RFC 9110
// §13.1.2), as Express compares them.
func ETagMatches(header, etag string) bool {
	if strings.TrimSpace(header) == "*" {
		return true
	}
	bare := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == bare {
			return true
		}
	}
	return false
}
