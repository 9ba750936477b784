package consensus

import (
	"context"
	"net/http"
	"time"
)

// A stream lives for hours: the server's read and write timeouts, which
// bound a request, must not end it (on HTTP/1.1 the read deadline ends the
// request's context; on HTTP/2 the write deadline resets the stream, even
// between writes). Once a stream starts, its deadlines are lifted and every
// write gets its own instead, lifted again once flushed.
type control struct {
	rc           *http.ResponseController
	writeTimeout time.Duration
	streaming    bool // only the handler's goroutine writes
	armed        bool
}

type controlKey struct{}

// controlled gives each request's handler a control of its writer.
func controlled(next http.Handler, writeTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &control{rc: http.NewResponseController(w), writeTimeout: writeTimeout}
		ctx := context.WithValue(r.Context(), controlKey{}, c)
		next.ServeHTTP(&controlledWriter{ResponseWriter: w, c: c}, r.WithContext(ctx))
	})
}

// startStream lifts the server's deadlines of the request ctx belongs to
// (its message is read by now); from then on each write is bounded.
func startStream(ctx context.Context) {
	c, _ := ctx.Value(controlKey{}).(*control)
	if c == nil {
		return
	}
	_ = c.rc.SetReadDeadline(time.Time{})
	_ = c.rc.SetWriteDeadline(time.Time{})
	c.streaming = true
}

func (c *control) arm() {
	if c.streaming && !c.armed {
		_ = c.rc.SetWriteDeadline(time.Now().Add(c.writeTimeout))
		c.armed = true
	}
}

func (c *control) disarm() {
	if c.armed {
		_ = c.rc.SetWriteDeadline(time.Time{})
		c.armed = false
	}
}

type controlledWriter struct {
	http.ResponseWriter
	c *control
}

func (w *controlledWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *controlledWriter) Write(b []byte) (int, error) {
	w.c.arm()
	return w.ResponseWriter.Write(b)
}

// Flush is what connect calls after each message.
func (w *controlledWriter) Flush() {
	w.c.arm()
	if err := w.c.rc.Flush(); err != nil {
		return // the deadline stays: the stream is broken anyway
	}
	w.c.disarm()
}
