// Package loadgen is a small closed-loop HTTP/1.1 load generator for the
// benchmark suite: a fixed number of keep-alive connections, each sending one
// request, reading the whole response, then sending the next, like wrk.
//
// It speaks just enough HTTP/1.1 over raw TCP connections (Content-Length and
// chunked bodies, keep-alive) to keep its own CPU cost well below net/http's,
// which matters on a machine where the load tool, the service and the database
// share two cores. Requests are prebuilt byte strings; each worker picks one at
// random per request, so random ids cost nothing at run time. Latencies go
// into an HDR histogram per worker (github.com/HdrHistogram/hdrhistogram-go),
// merged at the end.
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Config says what to send, how hard and for how long.
type Config struct {
	Addr     string        // host:port
	Conns    int           // concurrent connections (one worker each)
	Warmup   time.Duration // requests before the window are sent but not counted
	Duration time.Duration // the measured window
	Requests [][]byte      // complete HTTP/1.1 requests; one is picked at random per request
	// Check, if set, judges a 200 response body; false counts as an error.
	Check func(body []byte) bool
	// OnWindow, if set, is called when the measured window opens (true) and
	// closes (false), e.g. to sample the service's CPU time.
	OnWindow func(open bool)
	Seed     uint64
	// Interval, if > 0, cuts the window into intervals of that length and
	// calls OnInterval with the figures of each one (Elapsed is the
	// interval's length; the last one may be shorter), from one goroutine,
	// as each interval closes: the soak benchmark's samples over time.
	Interval   time.Duration
	OnInterval func(Result)
}

// Result is what one run measured in its window.
type Result struct {
	Requests  int64         // completed in the window (errors included)
	Errors    int64         // non-200, failed Check, or I/O errors
	Elapsed   time.Duration // the window
	Hist      *hdrhistogram.Histogram
	FirstErr  string // the first error seen, for the log
	BodyBytes int64
}

// RPS is the request rate in the window.
func (r Result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Quantile is a latency percentile (0..100).
func (r Result) Quantile(q float64) time.Duration {
	return time.Duration(r.Hist.ValueAtQuantile(q)) * time.Microsecond
}

// Get builds a GET request for path.
func Get(host, path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: mirrorql-loadgen\r\n\r\n")
}

// PostJSON builds a POST request with a JSON body.
func PostJSON(host, path string, body []byte) []byte {
	b := []byte("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: mirrorql-loadgen\r\n" +
		"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	return append(b, body...)
}

// Run drives the load until the window closes or ctx ends.
func Run(ctx context.Context, c Config) (Result, error) {
	if c.Conns < 1 || len(c.Requests) == 0 || c.Duration <= 0 {
		return Result{}, errors.New("loadgen: need Conns ≥ 1, Requests and Duration")
	}
	start := time.Now()
	open, closeAt := start.Add(c.Warmup), start.Add(c.Warmup+c.Duration)
	ctx, cancel := context.WithDeadline(ctx, closeAt.Add(5*time.Second))
	defer cancel()

	workers := make([]*worker, c.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{cfg: &c, open: open, close: closeAt,
			rng:  rand.New(rand.NewPCG(c.Seed, uint64(i)+1)),
			hist: hdrhistogram.New(1, 60_000_000, 3)}
		if c.Interval > 0 {
			w.ihist = hdrhistogram.New(1, 60_000_000, 3)
		}
		workers[i] = w
		wg.Add(1)
		w.stopped.Add(1)
		go func() { defer wg.Done(); defer w.stopped.Done(); w.run(ctx) }()
	}
	sampled := make(chan struct{})
	if c.Interval > 0 && c.OnInterval != nil {
		go func() { defer close(sampled); sampleIntervals(ctx, &c, workers, open, closeAt) }()
	} else {
		close(sampled)
	}
	if c.OnWindow != nil {
		t := time.NewTimer(time.Until(open))
		select {
		case <-t.C:
			c.OnWindow(true)
		case <-ctx.Done():
		}
		t.Stop()
	}
	wg.Wait()
	<-sampled
	for _, w := range workers {
		if w.conn != nil {
			w.conn.Close()
		}
	}
	if c.OnWindow != nil {
		c.OnWindow(false)
	}
	res := Result{Elapsed: c.Duration, Hist: hdrhistogram.New(1, 60_000_000, 3)}
	for _, w := range workers {
		res.Requests += w.n
		res.Errors += w.errs
		res.BodyBytes += w.bytes
		res.Hist.Merge(w.hist)
		if res.FirstErr == "" && w.firstErr != "" {
			res.FirstErr = w.firstErr
		}
	}
	if res.Requests == 0 {
		return res, fmt.Errorf("loadgen: no request completed in the window (%s)", res.FirstErr)
	}
	return res, nil
}

type worker struct {
	cfg         *Config
	open, close time.Time
	rng         *rand.Rand
	hist        *hdrhistogram.Histogram
	n, errs     int64
	bytes       int64
	firstErr    string

	conn net.Conn
	br   *bufio.Reader
	body []byte

	// the current interval (Config.Interval > 0), swapped by the sampler
	stopped  sync.WaitGroup // Done when run returns
	mu       sync.Mutex
	ihist    *hdrhistogram.Histogram
	in, ierr int64
	ifirst   string
}

// sampleIntervals hands OnInterval the figures of each interval of the
// window: at open+k·Interval while that is before the close, then once more
// after the workers stopped for the rest of the window.
func sampleIntervals(ctx context.Context, c *Config, workers []*worker, open, closeAt time.Time) {
	take := func(since time.Time, until time.Time) {
		res := Result{Elapsed: until.Sub(since), Hist: hdrhistogram.New(1, 60_000_000, 3)}
		for _, w := range workers {
			w.mu.Lock()
			res.Requests += w.in
			res.Errors += w.ierr
			res.Hist.Merge(w.ihist)
			if res.FirstErr == "" {
				res.FirstErr = w.ifirst
			}
			w.ihist.Reset()
			w.in, w.ierr, w.ifirst = 0, 0, ""
			w.mu.Unlock()
		}
		c.OnInterval(res)
	}
	from := open
	for k := 1; ; k++ {
		at := open.Add(time.Duration(k) * c.Interval)
		if !at.Before(closeAt) {
			break
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		take(from, at)
		from = at
	}
	// The rest of the window, once every request of it has been recorded.
	for _, w := range workers {
		w.stopped.Wait()
	}
	if closeAt.Sub(from) >= c.Interval/10 {
		take(from, closeAt)
	}
}

func (w *worker) fail(err string) {
	if w.firstErr == "" {
		w.firstErr = err
	}
}

// run sends requests until the window closes. It leaves its connection open:
// Run closes them all once the last interval has been sampled, so that the
// last sample sees the server with the load's connections, like the others.
func (w *worker) run(ctx context.Context) {
	reqs := w.cfg.Requests
	for ctx.Err() == nil {
		req := reqs[w.rng.IntN(len(reqs))]
		t0 := time.Now()
		if !t0.Before(w.close) {
			return
		}
		status, err := w.do(ctx, req)
		t1 := time.Now()
		if errors.Is(err, errClosed) { // a complete response; reconnect for the next
			w.conn.Close()
			w.conn, err = nil, nil
		}
		counted := !t0.Before(w.open) && !t1.After(w.close)
		if counted {
			w.n++
			_ = w.hist.RecordValue(max(1, t1.Sub(t0).Microseconds()))
		}
		failed := ""
		switch {
		case err != nil:
			failed = err.Error()
		case status != 200 || (w.cfg.Check != nil && !w.cfg.Check(w.body)):
			failed = fmt.Sprintf("status %d: %.200s", status, w.body)
		}
		if counted && w.ihist != nil {
			w.mu.Lock()
			w.in++
			_ = w.ihist.RecordValue(max(1, t1.Sub(t0).Microseconds()))
			if failed != "" && (err == nil || ctx.Err() == nil) {
				w.ierr++
				if w.ifirst == "" {
					w.ifirst = failed
				}
			}
			w.mu.Unlock()
		}
		switch {
		case err != nil:
			if w.conn != nil {
				w.conn.Close()
				w.conn = nil
			}
			if ctx.Err() != nil {
				return
			}
			if counted {
				w.errs++
			}
			w.fail(err.Error())
			time.Sleep(time.Millisecond) // do not spin on a refused connection
		case status != 200 || (w.cfg.Check != nil && !w.cfg.Check(w.body)):
			if counted {
				w.errs++
			}
			w.fail(fmt.Sprintf("status %d: %.200s", status, w.body))
		}
	}
}

// do sends one request and reads its response into w.body.
func (w *worker) do(ctx context.Context, req []byte) (int, error) {
	if w.conn == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", w.cfg.Addr)
		if err != nil {
			return 0, err
		}
		w.conn = c
		if w.br == nil {
			w.br = bufio.NewReaderSize(c, 64<<10)
		} else {
			w.br.Reset(c)
		}
	}
	_ = w.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := w.conn.Write(req); err != nil {
		return 0, err
	}
	status, n, err := readResponse(w.br, &w.body)
	w.bytes += int64(n)
	return status, err
}

var (
	errMalformed = errors.New("loadgen: malformed response")
	errClosed    = errors.New("loadgen: server closes the connection")
)

// readResponse reads one HTTP/1.1 response, leaving its body in *body.
// A "Connection: close" response (or one without a length) returns errClosed
// after the body so the caller reconnects.
func readResponse(br *bufio.Reader, body *[]byte) (status, n int, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, 0, errMalformed
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, errMalformed
	}
	length, chunked, closing := -1, false, false
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return status, 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return status, 0, errMalformed
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return status, 0, errMalformed
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			closing = bytes.EqualFold(v, []byte("close"))
		}
	}
	b := (*body)[:0]
	switch {
	case chunked:
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				return status, len(b), err
			}
			l = bytes.TrimRight(l, "\r\n")
			if i := bytes.IndexByte(l, ';'); i >= 0 {
				l = l[:i]
			}
			size, err := strconv.ParseInt(string(l), 16, 32)
			if err != nil {
				return status, len(b), errMalformed
			}
			if size == 0 {
				for { // trailers, then the empty line
					t, err := br.ReadSlice('\n')
					if err != nil {
						return status, len(b), err
					}
					if len(bytes.TrimRight(t, "\r\n")) == 0 {
						break
					}
				}
				break
			}
			if b, err = readN(br, b, int(size)); err != nil {
				return status, len(b), err
			}
			if _, err := br.Discard(2); err != nil {
				return status, len(b), err
			}
		}
	case length >= 0:
		if b, err = readN(br, b, length); err != nil {
			return status, len(b), err
		}
	default: // body until close
		rest, err := io.ReadAll(br)
		b = append(b, rest...)
		*body = b
		if err == nil {
			err = errClosed
		}
		return status, len(b), err
	}
	*body = b
	if closing {
		return status, len(b), errClosed
	}
	return status, len(b), nil
}

func readN(br *bufio.Reader, b []byte, n int) ([]byte, error) {
	start := len(b)
	b = slices.Grow(b, n)[:start+n]
	_, err := io.ReadFull(br, b[start:])
	return b, err
}
