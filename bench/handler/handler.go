// Package handler gives the benchmark suite the service's HTTP handler in
// process, for its EXPLAIN capture and its profiling benchmarks: the chain
// service.New builds for the binary, with the default configuration, minus
// the listener.
package handler

import (
	"context"
	"io"
	"log/slog"

	"github.com/labstack/echo/v4"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/observe"
	"mirrorql/service"
)

// New returns the service's handler over d with the default settings.
// Request logs are formatted (as the service does at its default level
// "info") and written to logTo; nil means io.Discard.
func New(d *db.DB, logTo io.Writer) *echo.Echo { return NewWith(d, logTo, nil) }

// NewWith is New with the default settings changed by edit (nil: none), e.g.
// the schedules response cache turned off (MIRRORQL_CACHE_ENABLED=false).
func NewWith(d *db.DB, logTo io.Writer, edit func(*config.Config)) *echo.Echo {
	if logTo == nil {
		logTo = io.Discard
	}
	cfg := config.Defaults()
	if edit != nil {
		edit(&cfg)
	}
	log, err := observe.NewLogger(logTo, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		log = slog.New(slog.NewJSONHandler(logTo, nil))
	}
	d.Health().Log = log
	ops, err := service.NewOperations(context.Background(), cfg, d, log)
	if err != nil { // only a Redis URL can fail, and the defaults have none
		panic(err)
	}
	return service.New(cfg, d, log, ops, nil)
}
