package httpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// blocking is a handler whose requests wait for release.
type blocking struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
		_, _ = io.WriteString(w, "finished")
	case <-r.Context().Done():
	}
}

func start(t *testing.T, grace time.Duration) (h *blocking, url string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	h = &blocking{entered: make(chan struct{}, 10), release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, Options{ReadHeaderTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	go func() { done <- Run(ctx, srv, ln, grace, nil) }()
	return h, "http://" + ln.Addr().String(), cancel, done
}

// patience bounds a wait for what normally takes milliseconds: a passing
// test never waits it out, so it only turns a hang into a failure (package
// live's tests have the same bound).
const patience = time.Minute

// idleReturn is how long Run takes, on this machine now, to return once its
// context ends with no request in flight: the pace the windows below are
// measured in.
func idleReturn(t *testing.T) time.Duration {
	t.Helper()
	_, _, cancel, done := start(t, patience)
	began := time.Now()
	cancel()
	if err := returned(t, done, "with nothing in flight"); err != nil {
		t.Fatalf("Run with nothing in flight = %v", err)
	}
	return time.Since(began)
}

// returned is what Run returned on done, waited for up to patience (a
// hang's bound): the test fails when it never returns, saying when.
func returned(t *testing.T, done <-chan error, when string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(patience):
		t.Fatalf("Run did not return %s", when)
		return nil
	}
}

type answer struct {
	body string
	err  error
}

func fetch(url string) chan answer {
	c := make(chan answer, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			c <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		c <- answer{body: string(b), err: err}
	}()
	return c
}

func TestShutdownFinishesInFlight(t *testing.T) {
	pace := idleReturn(t)
	h, url, cancel, done := start(t, patience)
	inflight := fetch(url)
	<-h.entered
	cancel() // SIGTERM

	// The listener closes at once: new connections are refused...
	deadline := time.Now().Add(patience)
	for {
		c, err := net.DialTimeout("tcp", url[len("http://"):], time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// ...while the request in flight is waited for: Run must not return
	// within a window (a negative can only be watched for a while). A Run
	// that did not wait would return about as fast as one with nothing to
	// wait for: a hundred times that, as measured, is a window it could not
	// slip through, however loaded the machine.
	window := 100 * pace
	t.Logf("Run returns %s after its end with nothing in flight; watched for %s", pace, window)
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) with a request in flight", err)
	case <-time.After(window):
	}
	close(h.release)
	if a := <-inflight; a.err != nil || a.body != "finished" {
		t.Fatalf("in-flight request: %q, %v", a.body, a.err)
	}
	if err := returned(t, done, "after the last request"); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

func TestShutdownGraceExceeded(t *testing.T) {
	const grace = 300 * time.Millisecond
	h, url, cancel, done := start(t, grace)
	inflight := fetch(url)
	<-h.entered
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrGraceExceeded) {
			t.Fatalf("Run = %v, want ErrGraceExceeded", err)
		}
		// Not before the grace; when after it is the machine's pace. The
		// request in flight never finishes by itself (the handler waits
		// for a release that does not come): a Run that waited for it
		// would not return at all, which the wait below bounds.
		el := time.Since(began)
		t.Logf("Run returned %v after its end, grace %v", el, grace)
		if el < grace {
			t.Fatalf("Run returned after %v, before the grace period (%v)", el, grace)
		}
	case <-time.After(patience):
		t.Fatal("Run did not return at the end of the grace period")
	}
	if a := <-inflight; a.err == nil && a.body == "finished" {
		t.Fatal("the cut-off request finished")
	}
}

func TestListenerFailureEndsRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	err = Run(context.Background(), New(http.NotFoundHandler(), Options{}), ln, time.Second, nil)
	if err == nil {
		t.Fatal("Run on a closed listener returned nil")
	}
}
