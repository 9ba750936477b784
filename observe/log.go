// Package observe is the service's operational telemetry: structured logs,
// request ids, and the Prometheus metrics of both faces and the pool.
package observe

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"mirrorql/config"
)

// NewLogger builds the service's logger: format "json" or "text", level
// debug, info, warn or error (MIRRORQL_LOG_FORMAT, MIRRORQL_LOG_LEVEL).
// Over a LogBuffer, the access log's lines are held and all others written
// at once.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl, err := config.ParseLogLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var handler, access func(io.Writer) slog.Handler
	switch format {
	case "json":
		handler = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }
		access = func(w io.Writer) slog.Handler { return newFlatJSON(w, opts) }
	case "text":
		handler = func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
		access = handler
	default:
		return nil, fmt.Errorf("unknown log format %q (json or text)", format)
	}
	if b, ok := w.(*LogBuffer); ok {
		return slog.New(accessSplit{access: access(b), other: handler(b.Now())}), nil
	}
	return slog.New(handler(w)), nil
}

// accessMessage is the message of the access log's lines (Middleware).
const accessMessage = AccessMessage

// AccessMessage is the message of every access log line, the faces served
// outside Echo's chain (gRPC) included: the lines below warning level with
// it go to the buffered access log.
const AccessMessage = "request"

// accessSplit sends the access log's lines below warning level to one
// handler and every other line to another.
type accessSplit struct{ access, other slog.Handler }

func (s accessSplit) Enabled(ctx context.Context, l slog.Level) bool { return s.other.Enabled(ctx, l) }

func (s accessSplit) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == accessMessage && r.Level < slog.LevelWarn {
		return s.access.Handle(ctx, r)
	}
	return s.other.Handle(ctx, r)
}

func (s accessSplit) WithAttrs(as []slog.Attr) slog.Handler {
	return accessSplit{s.access.WithAttrs(as), s.other.WithAttrs(as)}
}

func (s accessSplit) WithGroup(name string) slog.Handler {
	return accessSplit{s.access.WithGroup(name), s.other.WithGroup(name)}
}
