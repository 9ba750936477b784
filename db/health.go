package db

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"mirrorql/db/internal/driver"
)

// Health follows whether the database answers, from the outcome of every
// query and ping, and logs each change of state once (not once per failing
// request): "database unavailable" with the reason when it stops answering,
// "database available" when it answers again. Its zero value is ready (state
// unknown until the first outcome); it is safe for concurrent use.
type Health struct {
	// Log receives the state changes; nil means slog.Default() at the time.
	Log *slog.Logger

	mu    sync.Mutex
	state healthState
	since time.Time // when the current state began
}

type healthState int

const (
	stateUnknown healthState = iota
	stateUp
	stateDown
)

// Observe records the outcome of a database call: nil or an error the server
// itself answered with means it is up; a connection-level failure
// (Unavailable) means it is down; a cancelled or timed-out context says
// nothing either way.
func (h *Health) Observe(err error) {
	var next healthState
	switch {
	case err == nil, errors.Is(err, sql.ErrNoRows):
		next = stateUp
	case Unavailable(err):
		next = stateDown
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return
	default:
		next = stateUp // a query error the server answered with
	}
	h.mu.Lock()
	prev, since := h.state, h.since
	if prev == next {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	h.state, h.since = next, now
	h.mu.Unlock()

	log := h.Log
	if log == nil {
		log = slog.Default()
	}
	switch {
	case next == stateDown:
		log.Error("database unavailable", "err", err.Error())
	case prev == stateDown:
		log.Info("database available", "down_for", now.Sub(since).Round(time.Millisecond).String())
	default:
		log.Info("database available")
	}
}

// Up reports whether the last outcome showed the database answering (false
// before any outcome).
func (h *Health) Up() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == stateUp
}

// Unavailable reports whether err means the database could not be reached or
// would not serve us (as opposed to an error in a query it ran): connection
// refused, reset or timed out, a connection that broke mid-query, or one of
// PostgreSQL's "connection exception", "operator intervention" (shutting
// down, starting up) and "too many connections" errors.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if code, ok := driver.SQLState(err); ok {
		switch {
		case len(code) == 5 && code[:2] == "08", // connection_exception
			len(code) == 5 && code[:3] == "57P", // admin/crash shutdown, cannot_connect_now
			code == "53300":                     // too_many_connections
			return true
		}
		return false
	}
	if errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// AfterQuery and BeforeQuery make Health a bun query hook, so every query of
// both faces feeds it.
// A query whose context ended says nothing about the database: its error
// is the caller's.
// The deadline is compared with the clock too, since the socket's deadline
// may fire a moment before the context's own timer marks it done.
func (h *Health) AfterQuery(ctx context.Context, e *bun.QueryEvent) { h.observeIn(ctx, e.Err) }

// observeIn is Observe for a call made under ctx: nothing when ctx ended.
func (h *Health) observeIn(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return
	}
	h.Observe(err)
}

// BeforeQuery is part of bun.QueryHook.
func (h *Health) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
