// Package observe is the service's operational telemetry: structured logs,
// request ids, and the Prometheus metrics of both faces and the pool.
package observe

import (
	"fmt"
	"io"
	"log/slog"

	"mirrorql/config"
)

// NewLogger builds the service's logger: format "json" or "text", level
// debug, info, warn or error (MIRRORQL_LOG_FORMAT, MIRRORQL_LOG_LEVEL).
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl, err := config.ParseLogLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (json or text)", format)
}
