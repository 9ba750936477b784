package observe

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// LogBuffer holds access-log lines briefly and writes them in blocks: at
// most delay after the first line of a block, or sooner when size bytes are
// waiting. Writing each request's line at once cost a system call per
// request, a share of the service's CPU on the by-sequence route that
// showed in its profile (bench/results/decisions-2026-11.md); an access log
// that trails by a tenth of a second is the usual trade (nginx's
// access_log buffer/flush). Every other line (Now) is written at once,
// after what is held, so the log keeps its order and an operator sees
// "database unavailable" when it happens. Nothing is written while the
// service is idle, and Flush writes what is held before the process exits.
type LogBuffer struct {
	delay time.Duration

	mu    sync.Mutex
	buf   *bufio.Writer
	armed bool // a flush is scheduled
}

// NewLogBuffer buffers writes to w; a delay of 0 or less writes through.
func NewLogBuffer(w io.Writer, size int, delay time.Duration) *LogBuffer {
	return &LogBuffer{delay: delay, buf: bufio.NewWriterSize(w, size)}
}

// Write holds p (one log line: slog writes each record with one call).
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Available() < len(p) && b.buf.Buffered() > 0 {
		// Whole lines only: a block never ends inside a line.
		if err := b.buf.Flush(); err != nil {
			return 0, err
		}
	}
	n, err := b.buf.Write(p)
	switch {
	case err != nil:
	case b.delay <= 0:
		err = b.buf.Flush()
	case !b.armed && b.buf.Buffered() > 0:
		b.armed = true
		time.AfterFunc(b.delay, func() { b.Flush() }) //nolint:errcheck // a later write reports it
	}
	return n, err
}

// Now is the writer of lines that must not wait: each is written at once,
// after the lines held.
func (b *LogBuffer) Now() io.Writer { return nowWriter{b} }

type nowWriter struct{ b *LogBuffer }

func (w nowWriter) Write(p []byte) (int, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	w.b.armed = false // the timer that is armed finds nothing, or a new block
	if err := w.b.buf.Flush(); err != nil {
		return 0, err
	}
	n, err := w.b.buf.Write(p)
	if err == nil {
		err = w.b.buf.Flush()
	}
	return n, err
}

// Flush writes everything held.
func (b *LogBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	return b.buf.Flush()
}
