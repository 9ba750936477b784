// Package httpserver runs the service's HTTP server: its timeouts, and a
// graceful shutdown that stops accepting, lets in-flight requests finish
// within a grace period and only then returns.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Options are the server's timeouts and limits.
type Options struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// MaxHeaderBytes bounds a request's head (net/http answers 431 past it);
	// 0 means 64 KiB.
	MaxHeaderBytes int
	// KeepAlive: an HTTP/2 connection (gRPC's) from which nothing came for
	// this long gets a ping, and is closed when the ping goes unanswered as
	// long; 0 sends none.
	KeepAlive time.Duration
	// ConnContext, when set, is the server's ConnContext (per-connection
	// state of the gRPC face).
	ConnContext func(context.Context, net.Conn) context.Context
	Log         *slog.Logger
}

// New is an http.Server for h with o's timeouts.
func New(h http.Handler, o Options) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
	}
	// gRPC clients speak HTTP/2 without TLS (TLS ends at the ingress); an
	// HTTP/1.1 client is served as before. Go's HTTP/2 server answers every
	// ping: the Go SDK's, every 10 s even with no call open, never cost it
	// its connection.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.HTTP2 = &http.HTTP2Config{SendPingTimeout: o.KeepAlive, PingTimeout: o.KeepAlive}
	srv.ConnContext = o.ConnContext
	if srv.MaxHeaderBytes <= 0 {
		srv.MaxHeaderBytes = 64 << 10
	}
	if o.Log != nil {
		srv.ErrorLog = slog.NewLogLogger(o.Log.Handler(), slog.LevelWarn)
	}
	return srv
}

// ErrGraceExceeded is returned when requests were still running at the end
// of the grace period and had to be cut off.
var ErrGraceExceeded = errors.New("shutdown grace period exceeded: in-flight requests were cut off")

// Run serves on ln until ctx is done, then shuts down: the listener closes at
// once, idle connections are closed, requests in flight may finish within
// grace; past it the remaining connections are closed and Run returns
// ErrGraceExceeded. A failure of the listener itself ends Run early.
//
// Streams are not requests that finish by themselves, and a hijacked
// connection (a WebSocket) is not waited for at all: each of ends, run
// alongside the shutdown within the same grace, ends some of them (it must
// return once they are ended, or when its context ends).
func Run(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, log *slog.Logger, ends ...func(context.Context) error) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: no new connections, waiting for requests in flight", "grace", grace)
	start := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	ended := make(chan error, len(ends))
	for _, end := range ends {
		go func() { ended <- end(sctx) }()
	}
	err := srv.Shutdown(sctx)
	for range ends {
		if eerr := <-ended; eerr != nil && err == nil {
			err = eerr
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		log.Warn("shutdown grace period exceeded; closed the remaining connections", "grace", grace)
		err = ErrGraceExceeded
	} else if err == nil {
		log.Info("http server stopped", "took", time.Since(start).Round(time.Millisecond))
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
