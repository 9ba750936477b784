package db

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{opErr, true},
		{fmt.Errorf("topic 7: %w", opErr), true},
		{&pgconn.ConnectError{}, true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{driver.ErrBadConn, true},
		{syscall.ECONNRESET, true},
		{&pgconn.PgError{Code: "57P01"}, true},  // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true},  // cannot_connect_now
		{&pgconn.PgError{Code: "08006"}, true},  // connection_failure
		{&pgconn.PgError{Code: "53300"}, true},  // too_many_connections
		{&pgconn.PgError{Code: "57014"}, false}, // statement timeout: the server answered
		{&pgconn.PgError{Code: "42P01"}, false}, // undefined table
		{context.Canceled, false},
		{errors.New("something else"), false},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestHealthLogsStateChangesOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := &Health{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	down := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	if h.Up() {
		t.Error("up before any outcome")
	}
	h.Observe(nil)
	for i := 0; i < 100; i++ {
		h.Observe(down)
		h.Observe(context.Canceled) // says nothing
	}
	if h.Up() {
		t.Error("up during the outage")
	}
	for i := 0; i < 100; i++ {
		h.Observe(nil)
		h.Observe(&pgconn.PgError{Code: "57014"})
	}
	if !h.Up() {
		t.Error("down after recovery")
	}
	logs := buf.String()
	if n := strings.Count(logs, "database unavailable"); n != 1 {
		t.Errorf("%d unavailable lines, want 1:\n%s", n, logs)
	}
	if n := strings.Count(logs, "database available"); n != 2 {
		t.Errorf("%d available lines, want 2 (first success, recovery):\n%s", n, logs)
	}
	if !strings.Contains(logs, "connection refused") || !strings.Contains(logs, "down_for=") {
		t.Errorf("the lines do not say why and for how long:\n%s", logs)
	}
}

func TestHealthIgnoresEndedContexts(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := &Health{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	h.Observe(nil)
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	h.AfterQuery(ctx, &bun.QueryEvent{Err: timeout})
	if !h.Up() || strings.Contains(buf.String(), "unavailable") {
		t.Errorf("a query cut by its own deadline counted as an outage:\n%s", buf.String())
	}
	h.AfterQuery(context.Background(), &bun.QueryEvent{Err: timeout})
	if h.Up() {
		t.Error("a read timeout with no deadline of the caller's is an outage")
	}
}
