package httpserver

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveNodeHeads serves, behind NodeHeads, a handler that answers the
// request target and body it received.
func serveNodeHeads(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, r.RequestURI+"|"+string(body))
	}), Options{ReadHeaderTimeout: 10 * time.Second})
	go func() { _ = srv.Serve(NodeHeads(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// exchange writes raw on a fresh connection and reads until the server
// closes it (requests ask for that) or has sent want answers.
func exchange(t *testing.T, addr, raw string, want int) []string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var out []string
	for len(out) < want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			break
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out = append(out, resp.Status+" "+resp.Header.Get("Content-Type")+" "+string(body))
	}
	return out
}

func TestNodeHeads(t *testing.T) {
	addr := serveNodeHeads(t)
	head := func(target string, headers ...string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(headers, "") + "\r\n"
	}
	// Node counts the target and each header's name and value: 16,383 is
	// the most it takes.
	pad := func(target string, total int) string {
		n := total - len(target) - len("Host") - len("x") - len("X-Pad")
		return "X-Pad: " + strings.Repeat("b", n) + "\r\n"
	}
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"ordinary", head("/api/v1/schedules?limit=1"), []string{"200 OK text/plain; charset=utf-8 /api/v1/schedules?limit=1|"}},
		{"a raw # ends the target", head("/api/v1/schedules#x?limit=1"), []string{"200 OK text/plain; charset=utf-8 /api/v1/schedules|"}},
		{"a # in the query too", head("/API/V1?limit=1#limit=2"), []string{"200 OK text/plain; charset=utf-8 /API/V1?limit=1|"}},
		{"a bad escape in the path is a literal percent", head("/api/v1/sch%zzedules/%/%4?q=%zz"),
			[]string{"200 OK text/plain; charset=utf-8 /api/v1/sch%25zzedules/%25/%254?q=%zz|"}},
		{"good escapes kept", head("/api/v1/a%2Fb%C3%A9"), []string{"200 OK text/plain; charset=utf-8 /api/v1/a%2Fb%C3%A9|"}},
		{"non-ASCII byte in the target", head("/api/v1/sch\xc3\xa9dules"), []string{"400 Bad Request  "}},
		{"control byte in the target", head("/api/v1/a\x01"), []string{"400 Bad Request  "}},
		{"DEL in the target", head("/api/v1/\x7f"), []string{"400 Bad Request  "}},
		{"a space in the target", head("/api/v1/a?limit= 2"), []string{"400 Bad Request  "}},
		{"no version", "GET /api/v1/a\r\nHost: x\r\n\r\n", []string{"400 Bad Request  "}},
		{"the most Node takes", head("/api/v1", pad("/api/v1", 16383)), []string{"200 OK text/plain; charset=utf-8 /api/v1|"}},
		{"one byte more", head("/api/v1", pad("/api/v1", 16384)), []string{"431 Request Header Fields Too Large  "}},
		{"a long target", head("/api/v1/x?" + strings.Repeat("a", 16<<10)), []string{"431 Request Header Fields Too Large  "}},
		{"a head past what is held", head("/api/v1/", "X-Pad: "+strings.Repeat("b", 70<<10)+"\r\n"), []string{"431 Request Header Fields Too Large  "}},
		{"pipelined, with a body between", "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\nGET /#x HTTP" + head("/api/v1/q#1"),
			[]string{"200 OK text/plain; charset=utf-8 /p|GET /#x HTTP", "200 OK text/plain; charset=utf-8 /api/v1/q|"}},
		{"an empty line before the request", "\r\n" + head("/api/v1/e#"), []string{"200 OK text/plain; charset=utf-8 /api/v1/e|"}},
		{"a bad request after a good one", head("/1") + head("/api/v1/\xff"), []string{"200 OK text/plain; charset=utf-8 /1|", "400 Bad Request  "}},
		// the other faces' heads pass on as they came: Go's server answers them
		{"other faces: a # is Go's", head("/graphql#x"), []string{"200 OK text/plain; charset=utf-8 /graphql#x|"}},
		{"other faces: raw UTF-8 is Go's", head("/graphql?q=\xc3\xa9"), []string{"200 OK text/plain; charset=utf-8 /graphql?q=\xc3\xa9|"}},
		{"other faces: a long head is Go's", head("/graphql", pad("/graphql", 20000)), []string{"200 OK text/plain; charset=utf-8 /graphql|"}},
		{"a misspelt API path is the mirror node's", head("/apI\xff/v1"), []string{"400 Bad Request  "}},
		{"a path that is not the API", head("/ap\xff"), []string{"200 OK text/plain; charset=utf-8 /ap\xff|"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := exchange(t, addr, tc.raw, len(tc.want))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestNodeHeadsHTTP2: a connection that starts with HTTP/2's preface (gRPC
// with prior knowledge) passes through.
func TestNodeHeadsHTTP2(t *testing.T) {
	addr := serveNodeHeads(t)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: p}, Timeout: 20 * time.Second}
	resp, err := c.Get("http://" + addr + "/h2?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(body) != "/h2?x=1|" {
		t.Errorf("%s %q", resp.Proto, body)
	}
}

// memConn is a connection whose reads come from a byte string.
type memConn struct {
	net.Conn
	r *bytes.Reader
	w bytes.Buffer
}

func (m *memConn) Read(p []byte) (int, error)  { return m.r.Read(p) }
func (m *memConn) Write(p []byte) (int, error) { return m.w.Write(p) }
func (m *memConn) Close() error                { return nil }

func FuzzNodeHeads(f *testing.F) {
	for _, s := range []string{"GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /%zz HTTP/1.1\r\n\r\n",
		"\r\n\r\nGET / HTTP/1.0\n\n", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c := &headConn{Conn: &memConn{r: bytes.NewReader([]byte(raw))}}
		var got []byte
		buf := make([]byte, 7)
		for range 4 * (len(raw) + 10) {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		// what passes on is never more than came in, but for "%25"s
		if len(got) > 3*len(raw) {
			t.Fatalf("%d bytes out of %d", len(got), len(raw))
		}
		_ = c.Close()
	})
}

// BenchmarkNodeHeads is what examining a head costs a request: an ordinary
// REST head read through headConn, per request on a kept-alive connection.
func BenchmarkNodeHeads(b *testing.B) {
	head := []byte("GET /api/v1/topics/0.0.7/messages?limit=25&order=desc HTTP/1.1\r\nHost: mirror.example:8080\r\n" +
		"User-Agent: Go-http-client/1.1\r\nAccept: application/json\r\nAccept-Encoding: gzip\r\n\r\n")
	const perConn = 1000
	stream := bytes.Repeat(head, perConn)
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := &headConn{Conn: &memConn{r: bytes.NewReader(stream)}}
		for n := 0; n < len(stream); {
			k, err := c.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			n += k
		}
		_ = c.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perConn), "ns/request")
}
