package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// The "HTTP alone" phase measures what the machine leaves for a request when
// nothing but HTTP is done: a second process, this binary started again,
// answers every request with one response the service gave on the
// by-sequence route (its headers and body, recorded at the start), from
// memory, through net/http with no middleware and no database. The load
// generator drives it exactly as it drives the service. Its rate is a ceiling
// no handler can pass on this machine, and its p99 the tail that time-sharing
// two cores among the load generator and a server adds to every exchange —
// the part of the service's p99 that no change to the service removes.

// aloneRoute is the phase's name in -routes, the tables and the rounds.
const aloneRoute = "http-alone"

// aloneEnv names the file of the recorded response; set, the binary serves
// it instead of running the suite.
const aloneEnv = "MIRRORQL_BENCH_HTTP_ALONE"

// recorded is one response as the alone server repeats it.
type recorded struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// recordResponse asks the service for path and keeps its answer in a file
// for the alone server. Date is left out: net/http writes its own.
func recordResponse(ctx context.Context, s *service, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.host+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	b, err := json.Marshal(recorded{Header: h, Body: body})
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "mirrorql-bench-response-*.json")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func readRecorded(file string) (recorded, error) {
	var r recorded
	b, err := os.ReadFile(file)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// aloneHandler answers every request with r.
func aloneHandler(r recorded) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		for k, v := range r.Header {
			h[k] = v
		}
		_, _ = w.Write(r.Body)
	})
}

// serveAlone is the alone server's process: the response in file, on the
// address the suite gives every service.
func serveAlone(file string) error {
	r, err := readRecorded(file)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", os.Getenv("MIRRORQL_LISTEN"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: aloneHandler(r), ReadHeaderTimeout: 10 * time.Second}
	// The suite stops its services with SIGTERM and counts any other exit
	// as a failure.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, os.Interrupt)
	go func() { <-term; srv.Close() }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startAlone records the service's answer to the by-sequence route's first
// request and starts the alone server with it.
func startAlone(ctx context.Context, f flags, svc *service, bySequence route) (*service, route, error) {
	line, _, _ := strings.Cut(string(bySequence.reqs[0]), "\r\n")
	fields := strings.Fields(line) // GET <path> HTTP/1.1
	if len(fields) != 3 {
		return nil, route{}, fmt.Errorf("by-sequence request %q", line)
	}
	file, err := recordResponse(ctx, svc, fields[1])
	if err != nil {
		return nil, route{}, err
	}
	// A ready alone server has read it (serveAlone reads before it listens).
	defer os.Remove(file)
	self, err := os.Executable()
	if err != nil {
		return nil, route{}, err
	}
	af := f
	af.bin, af.serviceEnv = self, []string{aloneEnv + "=" + file}
	alone, err := startService(ctx, af, "")
	if err != nil {
		return nil, route{}, err
	}
	r := bySequence
	r.name, r.title, r.scaling = aloneRoute, "HTTP alone (no database)", false
	return alone, r, nil
}
