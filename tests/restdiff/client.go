package restdiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Send writes r to the server at addr (host:port) as one HTTP/1.1 request
// on a connection of its own, the target exactly as given (an HTTP client
// library would clean it first), and reads the answer.
func Send(addr string, r Request, timeout time.Duration) (Answer, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return Answer{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	var b bytes.Buffer
	b.WriteString("GET " + r.Target + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n")
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k + ": " + r.Header[k] + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := conn.Write(b.Bytes()); err != nil {
		return Answer{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		return Answer{}, fmt.Errorf("%.80q: %w", r.Target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, fmt.Errorf("%.80q: body: %w", r.Target, err)
	}
	a := Answer{
		Status:       resp.StatusCode,
		ContentType:  resp.Header.Get("Content-Type"),
		Link:         resp.Header.Get("Link"),
		CacheControl: resp.Header.Get("Cache-Control"),
	}
	if json.Valid(body) {
		var c bytes.Buffer
		if json.Compact(&c, body) == nil {
			a.JSON = c.Bytes()
		}
	} else {
		a.Text = string(body)
	}
	return a, nil
}

// NextLink is the page's links.next, "" when there is none or the answer
// is not a page.
func NextLink(a Answer) string {
	if a.Status != http.StatusOK || a.JSON == nil {
		return ""
	}
	var page struct {
		Links struct {
			Next *string `json:"next"`
		} `json:"links"`
	}
	if json.Unmarshal(a.JSON, &page) != nil || page.Links.Next == nil {
		return ""
	}
	return *page.Links.Next
}

// HostPort is the host:port of a base URL ("http://127.0.0.1:5551").
func HostPort(base string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}
