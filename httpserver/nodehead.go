package httpserver

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// NodeHeads wraps ln so that each HTTP/1 request head for the mirror node's
// REST API (a target under /api, in any case) is read as the mirror
// node's HTTP server (Node's parser) reads it, before Go's server sees it,
// where the two differ:
//
//   - a request line and headers of 16 KiB or more (counted as Node counts
//     them: the target, and each header's name and value) answer 431 with
//     an empty body, and the connection closes;
//   - a request line that is not "method SP target SP version", or a target
//     holding a control byte, DEL or a byte past ASCII, answers 400 with an
//     empty body, and the connection closes;
//   - a raw '#' in the target ends it (Node drops it and all after);
//   - a '%' in the path that starts no escape is passed on as "%25": Go's
//     server would refuse the request with a plain-text 400, where Node
//     routes it (a literal segment so spelt matches no route: the JSON 404).
//
// Heads for the service's other faces pass on as they came (Go's server
// answers them). Bodies pass through untouched (Content-Length is
// followed); after a head
// whose body is chunked, an upgrade, or the HTTP/2 preface, the rest of the
// connection passes through unexamined.
func NodeHeads(ln net.Listener) net.Listener { return &nodeListener{ln} }

type nodeListener struct{ net.Listener }

func (l *nodeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: c}, nil
}

// nodeMaxHeaderSize is Node's http.maxHeaderSize (16 KiB): a head whose
// count reaches it is refused.
const nodeMaxHeaderSize = 16 << 10

// maxHeadBytes bounds what is held of one head while its end is awaited.
const maxHeadBytes = 64 << 10

var (
	answer400 = []byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
	answer431 = []byte("HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
)

var headBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// headConn examines each request head before handing it on.
type headConn struct {
	net.Conn
	buf  *[]byte // pooled; in is a window of it
	in   []byte  // bytes read and not yet handed on
	out  []byte  // an examined head (or body bytes) ready to hand on
	body int64   // body bytes of the current request still to hand on
	pass bool    // the rest of the connection is handed on unexamined
	done bool    // an answer was written: the connection ends
}

func (c *headConn) Read(p []byte) (int, error) {
	for {
		switch {
		case len(c.out) > 0:
			n := copy(p, c.out)
			c.out = c.out[n:]
			return n, nil
		case c.done:
			// Go's server ends a connection quietly at EOF
			return 0, io.EOF
		case c.pass || c.body > 0:
			if len(c.in) > 0 {
				n := len(c.in)
				if !c.pass && int64(n) > c.body {
					n = int(c.body)
				}
				n = copy(p, c.in[:n])
				c.in = c.in[n:]
				c.body -= int64(n)
				return n, nil
			}
			if !c.pass && int64(len(p)) > c.body {
				p = p[:c.body]
			}
			n, err := c.Conn.Read(p)
			c.body -= int64(n)
			return n, err
		}
		if len(c.in) >= 4 && bytes.HasPrefix(c.in, []byte("PRI ")) {
			c.pass = true // HTTP/2 with prior knowledge (gRPC)
			continue
		}
		if end := headEnd(c.in); end >= 0 {
			head := c.in[:end]
			c.in = c.in[end:]
			c.examine(head)
			continue
		}
		if len(c.in) > maxHeadBytes {
			if restTarget(c.in[:min(len(c.in), 4096)]) {
				c.answer(answer431)
			} else {
				c.pass = true // Go's server answers its own 431
			}
			continue
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
}

// fill reads more of the connection into in, keeping what is there (a read
// that times out, as Go's server makes its background read do, loses
// nothing).
func (c *headConn) fill() error {
	if c.buf == nil {
		c.buf = headBufs.Get().(*[]byte)
		c.in = (*c.buf)[:0]
	}
	b := (*c.buf)[:cap(*c.buf)]
	// in is a window of b reaching to its end: start is where it begins
	start := cap(b) - cap(c.in)
	switch {
	case len(c.in) == 0:
		c.in = b[:0]
	case start > 0 && cap(c.in)-len(c.in) < 1024:
		c.in = b[:copy(b, c.in)]
	}
	if cap(c.in)-len(c.in) < 1024 {
		grown := make([]byte, len(c.in), 2*cap(b)+1024)
		copy(grown, c.in)
		*c.buf = grown
		c.in = grown
	}
	n, err := c.Conn.Read(c.in[len(c.in):cap(c.in)])
	c.in = c.in[:len(c.in)+n]
	if n > 0 {
		return nil
	}
	return err
}

// CloseWrite lets Go's server half-close the connection before it closes
// it on a refused request, as it does an unwrapped TCP connection.
func (c *headConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *headConn) Close() error {
	if c.buf != nil && cap(*c.buf) <= maxHeadBytes {
		*c.buf = (*c.buf)[:0]
		headBufs.Put(c.buf)
	}
	c.buf, c.in = nil, nil
	return c.Conn.Close()
}

// answer writes Node's answer to a head it refuses and ends the connection:
// as Go's server does before it closes on a refused request, the write side
// first, then a moment in which what the client still sends is read and
// dropped, so that unread bytes do not make the kernel reset the connection
// before the client has read the answer.
func (c *headConn) answer(a []byte) {
	_, _ = c.Conn.Write(a)
	c.done = true
	c.in, c.out = nil, nil
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = c.Conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(c.Conn, 256<<10))
	}
}

// headEnd is the length of the head at the start of b (through its empty
// line), or -1 while it is incomplete.
func headEnd(b []byte) int {
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		if j := bytes.Index(b[:i+2], []byte("\n\n")); j >= 0 {
			return j + 2
		}
		return i + 4
	}
	if j := bytes.Index(b, []byte("\n\n")); j >= 0 {
		return j + 2
	}
	return -1
}

// examine checks one complete head and queues it, rewritten if need be, or
// answers it.
func (c *headConn) examine(head []byte) {
	lineEnd := bytes.IndexByte(head, '\n')
	line := bytes.TrimSuffix(head[:lineEnd], []byte("\r"))
	rest := head[lineEnd+1:]
	if len(line) == 0 {
		// an empty line before a request line is skipped; the rest of
		// the head is examined again (in follows it in the buffer)
		b := (*c.buf)[:cap(*c.buf)]
		start := cap(b) - cap(c.in)
		c.in = b[start-len(rest) : start+len(c.in)]
		return
	}
	method, target, version, ok := splitRequestLine(line)
	api := restTarget(line)
	if api && (!ok || !targetBytesOK(target)) {
		c.answer(answer400)
		return
	}
	count := len(target)
	var contentLength int64
	for len(rest) > 0 {
		e := bytes.IndexByte(rest, '\n')
		if e < 0 {
			break
		}
		h := bytes.TrimSuffix(rest[:e], []byte("\r"))
		rest = rest[e+1:]
		colon := bytes.IndexByte(h, ':')
		if colon < 0 {
			continue
		}
		name, value := h[:colon], bytes.TrimLeft(h[colon+1:], " \t")
		count += len(name) + len(value)
		switch {
		case asciiFold(name, "content-length"):
			n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			if err != nil || n < 0 {
				c.pass = true // Go's server answers it
			}
			contentLength = n
		case asciiFold(name, "transfer-encoding"), asciiFold(name, "upgrade"):
			c.pass = true
		}
	}
	if api && count >= nodeMaxHeaderSize {
		c.answer(answer431)
		return
	}
	if string(method) == "CONNECT" {
		c.pass = true
	}
	if !c.pass {
		c.body = contentLength
	}
	if !api || !ok {
		c.out = head
		return
	}
	fixed, changed := nodeTarget(target)
	if !changed {
		c.out = head
		return
	}
	out := make([]byte, 0, len(head)+len(fixed)-len(target))
	out = append(out, method...)
	out = append(out, ' ')
	out = append(out, fixed...)
	out = append(out, ' ')
	out = append(out, version...)
	out = append(out, head[len(line):]...)
	c.out = out
}

// restTarget reports whether the request line's target (what follows the
// method) is the mirror node's: it starts with /api in any case (a client
// that misspells /api/v1 meets the mirror node's server too, not another
// face of ours).
func restTarget(line []byte) bool {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return false
	}
	t := line[sp+1:]
	const prefix = "/api"
	return len(t) >= len(prefix) && asciiFold(t[:len(prefix)], prefix)
}

func splitRequestLine(line []byte) (method, target, version []byte, ok bool) {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return nil, nil, nil, false
	}
	sp2 := bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 {
		return nil, nil, nil, false
	}
	method, target, version = line[:sp1], line[sp1+1:sp1+1+sp2], line[sp1+2+sp2:]
	if !bytes.HasPrefix(version, []byte("HTTP/")) || bytes.IndexByte(version, ' ') >= 0 {
		return nil, nil, nil, false
	}
	return method, target, version, true
}

// targetBytesOK: Node's parser refuses a control byte, DEL or a byte past
// ASCII in a request target.
func targetBytesOK(t []byte) bool {
	for _, b := range t {
		if b <= ' ' || b >= 0x7f {
			return false
		}
	}
	return true
}

// nodeTarget is the target as it reaches the router: cut at a raw '#', and
// each '%' of the path that starts no escape written "%25".
func nodeTarget(t []byte) ([]byte, bool) {
	changed := false
	if i := bytes.IndexByte(t, '#'); i >= 0 {
		t, changed = t[:i], true
	}
	path := t
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		path = t[:q]
	}
	bad := 0
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && !(i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2])) {
			bad++
		}
	}
	if bad == 0 {
		return t, changed
	}
	out := make([]byte, 0, len(t)+2*bad)
	for i := 0; i < len(path); i++ {
		out = append(out, path[i])
		if path[i] == '%' && !(i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2])) {
			out = append(out, '2', '5')
		}
	}
	return append(out, t[len(path):]...), true
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func asciiFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		x := b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != lower[i] {
			return false
		}
	}
	return true
}
