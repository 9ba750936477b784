package loadgen

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	cases := []struct {
		name, raw, body string
		status          int
		closed          bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", 200, false},
		{"chunked", "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n", "abcde", 404, false},
		{"close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", "ok", 200, true},
		{"until EOF", "HTTP/1.0 200 OK\r\n\r\nrest", "rest", 200, true},
	}
	for _, c := range cases {
		var body []byte
		status, n, err := readResponse(bufio.NewReader(strings.NewReader(c.raw)), &body)
		if c.closed != (err == errClosed) || (!c.closed && err != nil) {
			t.Errorf("%s: err %v", c.name, err)
		}
		if status != c.status || string(body) != c.body || n != len(c.body) {
			t.Errorf("%s: got %d %q (%d), want %d %q", c.name, status, body, n, c.status, c.body)
		}
	}
}

func TestRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // forces chunked encoding
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	windows := 0
	res, err := Run(context.Background(), Config{
		Addr: host, Conns: 4, Warmup: 50 * time.Millisecond, Duration: 300 * time.Millisecond,
		Requests: [][]byte{Get(host, "/a"), Get(host, "/b?chunked=1"), PostJSON(host, "/c", []byte(`{}`))},
		Check:    func(b []byte) bool { return string(b) == `{"ok":true}` },
		OnWindow: func(bool) { windows++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Requests < 10 || windows != 2 {
		t.Fatalf("requests %d errors %d (%s) windows %d", res.Requests, res.Errors, res.FirstErr, windows)
	}
	if res.Quantile(50) <= 0 || res.Quantile(99) < res.Quantile(50) {
		t.Fatalf("quantiles %v %v", res.Quantile(50), res.Quantile(99))
	}
	res, err = Run(context.Background(), Config{Addr: host, Conns: 2, Duration: 100 * time.Millisecond,
		Requests: [][]byte{Get(host, "/bad")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != res.Requests {
		t.Fatalf("errors %d of %d", res.Errors, res.Requests)
	}
}

func TestRunIntervals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		w.Write([]byte(`ok`))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var got []Result
	res, err := Run(context.Background(), Config{
		Addr: host, Conns: 3, Duration: 550 * time.Millisecond, Interval: 200 * time.Millisecond,
		Requests:   [][]byte{Get(host, "/a"), Get(host, "/a"), Get(host, "/a"), Get(host, "/bad")},
		OnInterval: func(r Result) { got = append(got, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// 200 + 200 + the last 150 ms.
	if len(got) != 3 || got[0].Elapsed != 200*time.Millisecond || got[2].Elapsed != 150*time.Millisecond {
		t.Fatalf("%d intervals: %+v", len(got), got)
	}
	var n, errs int64
	for _, r := range got {
		if r.Requests == 0 || r.Errors == 0 || r.FirstErr == "" || r.Hist.TotalCount() != r.Requests {
			t.Fatalf("interval %+v", r)
		}
		n, errs = n+r.Requests, errs+r.Errors
	}
	if n != res.Requests || errs != res.Errors {
		t.Fatalf("intervals %d/%d, run %d/%d", n, errs, res.Requests, res.Errors)
	}
}
