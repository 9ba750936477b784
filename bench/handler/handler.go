// Package handler assembles the REST face in process, for the benchmark
// suite's EXPLAIN capture and its profiling benchmarks: the same Echo chain
// as server.go's newServer (route canonicalisation, the observer with its
// metrics and one JSON log line per request, recovery, CORS, gzip, a request
// deadline, rest.Handlers, the GraphQL handler), without the listener and the schedules-list
// cache. newServer is in package main and cannot be imported; keep this in
// step with it.
package handler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/observe"
	"mirrorql/rest"
)

// New returns the REST routes and /graphql over d with the service's default settings.
// Request logs are formatted (as the service does at its default level
// "info") and written to logTo; nil means io.Discard.
func New(d *db.DB, logTo io.Writer) *echo.Echo {
	if logTo == nil {
		logTo = io.Discard
	}
	log, err := observe.NewLogger(logTo, "json", "info")
	if err != nil {
		log = slog.New(slog.NewJSONHandler(logTo, nil))
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = rest.ErrorHandler(func(echo.Context, error) {})
	e.Pre(rest.CanonicalRoute)
	e.Use(
		observe.Middleware(observe.MiddlewareOptions{Log: log, Metrics: observe.NewMetrics(), Routes: e.Routes}),
		middleware.Recover(),
		rest.CORS,
		middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024}),
		func(next echo.HandlerFunc) echo.HandlerFunc { // server.go's requestDeadline, default 10s
			return func(c echo.Context) error {
				ctx, cancel := context.WithTimeout(c.Request().Context(), 10*time.Second)
				defer cancel()
				c.SetRequest(c.Request().WithContext(ctx))
				return next(c)
			}
		},
	)
	rest.New(d, rest.Options{LimitDefault: 25, LimitMax: 100}).Register(e)
	gql := echo.WrapHandler(graph.NewHandler(d, graph.Options{
		LimitDefault: 25, LimitMax: 100, ScheduleLifetime: 30 * time.Minute, Log: log,
	}))
	e.Match([]string{http.MethodGet, http.MethodHead, http.MethodPost}, graph.Endpoint, gql)
	return e
}
