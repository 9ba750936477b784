// Package restdiff is the differential check of the REST face against the
// mirror node's own REST API (the Node module): a generator of ordinary and
// odd request targets, a client that sends a target byte for byte, the
// comparison of two answers, and the recorded cases that the end-to-end
// tests replay without Node (tests/testdata/restdiff/README.md).
package restdiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
)

// Answer is what a server answered, reduced to what the comparison reads.
type Answer struct {
	Status       int    `json:"status"`
	ContentType  string `json:"content_type,omitempty"`
	Link         string `json:"link,omitempty"`
	CacheControl string `json:"cache_control,omitempty"`
	// JSON is the body when it is JSON (compared with key order ignored);
	// Text is the body otherwise (compared exactly).
	JSON json.RawMessage `json:"json,omitempty"`
	Text string          `json:"text,omitempty"`
}

// Request is one request as sent: its target exactly as on the wire, and
// any extra header lines (a large one, to pass the head's size limit).
type Request struct {
	Target string            `json:"target"`
	Header map[string]string `json:"header,omitempty"`
	// Via names how the generator came to it: a class of URL, or
	// "links.next" for a page a recorded answer linked to.
	Via string `json:"via"`
}

// Case is one recorded pair: the mirror node's answer, and where mirrorql
// deliberately answers otherwise, the row of docs/reference/DECISIONS.md
// that says why and mirrorql's answer as recorded beside it.
type Case struct {
	Request
	Node     Answer  `json:"node"`
	Decision string  `json:"decision,omitempty"`
	Ours     *Answer `json:"ours,omitempty"`
}

// Want is the answer mirrorql must give: the mirror node's unless a
// decision says otherwise.
func (c *Case) Want() Answer {
	if c.Decision != "" && c.Ours != nil {
		return *c.Ours
	}
	return c.Node
}

// Diff is "" when got answers as want does: same status, the same JSON
// value (key order ignored) or the same text, and the same content-type,
// link and cache-control headers. Otherwise it says what differs.
func Diff(want, got Answer) string {
	var d []string
	if want.Status != got.Status {
		d = append(d, fmt.Sprintf("status %d, want %d", got.Status, want.Status))
	}
	if want.ContentType != got.ContentType {
		d = append(d, fmt.Sprintf("content-type %q, want %q", got.ContentType, want.ContentType))
	}
	if want.Link != got.Link {
		d = append(d, fmt.Sprintf("link %q, want %q", got.Link, want.Link))
	}
	if want.CacheControl != got.CacheControl {
		d = append(d, fmt.Sprintf("cache-control %q, want %q", got.CacheControl, want.CacheControl))
	}
	if !sameBody(want, got) {
		d = append(d, fmt.Sprintf("body %s, want %s", got.body(), want.body()))
	}
	return strings.Join(d, "; ")
}

func (a Answer) body() string {
	if a.JSON != nil {
		return string(a.JSON)
	}
	return fmt.Sprintf("%q", a.Text)
}

func sameBody(a, b Answer) bool {
	if (a.JSON == nil) != (b.JSON == nil) {
		return false
	}
	if a.JSON == nil {
		return a.Text == b.Text
	}
	var va, vb any
	if json.Unmarshal(a.JSON, &va) != nil || json.Unmarshal(b.JSON, &vb) != nil {
		return bytes.Equal(a.JSON, b.JSON)
	}
	return reflect.DeepEqual(va, vb)
}

// ReadCases reads a file of cases, one JSON object per line.
func ReadCases(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	for line := 1; sc.Scan(); line++ {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// WriteCases writes cases one JSON object per line, so that a re-recording
// reads as a diff of the cases that changed.
func WriteCases(path string, cases []Case) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range cases {
		if err := enc.Encode(&cases[i]); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
