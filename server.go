// Command mirrorql serves the mirror node's topics, topic messages and
// schedules over REST (byte-compatible with the mirror node) and GraphQL,
// reading the mirror node's PostgreSQL database.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"mirrorql/apidocs"
	"mirrorql/cache"
	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/httpserver"
	"mirrorql/limits"
	"mirrorql/model"
	"mirrorql/observe"
	"mirrorql/rest"
)

//go:embed openapi.yml
var openAPISpec []byte

const usage = `usage: mirrorql [command] [flags]

commands:
  serve        serve the REST and GraphQL APIs (the default)
  migrate      create or upgrade the database schema (idempotent)
  demo         serve demo data: on a throwaway PostgreSQL cluster of its own when
               MIRRORQL_DATABASE_URL is unset, else migrate and seed (if empty) that database
  seed         migrate, then write the deterministic data set (mirrorql seed -h for its flags)
  healthcheck  exit 0 if the service at MIRRORQL_LISTEN is ready, 1 if not
  help         this text

Configuration comes from MIRRORQL_* environment variables; see README.md.
`

func main() {
	cmd, args := "serve", os.Args[1:]
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	case "serve", "migrate", "demo", "seed", "healthcheck":
	default:
		fmt.Fprintf(os.Stderr, "mirrorql: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(2)
	}
	tuneGC()
	if _, set := os.LookupEnv(config.Prefix + "LOG_FORMAT"); cmd == "demo" && !set {
		cfg.LogFormat = "text" // a person reads the demo's terminal
	}
	log, err := observe.NewLogger(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(2)
	}
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	switch cmd {
	case "serve":
		err = serve(ctx, cfg, log)
	case "migrate":
		err = migrate(ctx, cfg)
	case "demo":
		err = demo(ctx, cfg, log, os.Stdout)
	case "seed":
		err = seedCommand(ctx, cfg, args, os.Stdout)
	case "healthcheck":
		err = healthcheck(ctx, cfg)
	}
	if errors.Is(err, errUsage) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(1)
	}
}

// The collector's settings unless the operator gave Go's own GOGC or
// GOMEMLIMIT. Go's default (GOGC=100) collected so often on the 100-message
// page that it cost a quarter of the service's CPU there (BENCHMARKS.md);
// collecting at 4× the live heap, with a soft limit that keeps the process
// within its 64 MiB budget, trades memory the service has for CPU it lacks.
const (
	gcPercent   = 300
	memoryLimit = 48 << 20
)

func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// errUsage is returned by a command whose flags were wrong (it has said why).
var errUsage = errors.New("usage")

func openDB(cfg config.Config) (*db.DB, error) {
	return db.Open(db.Options{
		URL: cfg.DatabaseURL, Driver: cfg.DBDriver, Prepare: cfg.DBPrepare, PoolSize: cfg.DBPoolSize,
		StatementTimeout: cfg.DBStatementTimeout, ConnectTimeout: cfg.DBConnectTimeout,
	})
}

func migrate(ctx context.Context, cfg config.Config) error {
	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	return db.Migrate(ctx, d.Bun())
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Health().Log = log
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if cfg.PprofListen != "" {
		if err := observe.ServeProfiles(ctx, cfg.PprofListen, log); err != nil {
			_ = ln.Close()
			return fmt.Errorf("%sPPROF_LISTEN: %w", config.Prefix, err)
		}
	}
	return runServer(ctx, cfg, d, log, ln)
}

// runServer serves both faces on ln until ctx is done, then shuts down
// gracefully. The caller closes d afterwards.
func runServer(ctx context.Context, cfg config.Config, d *db.DB, log *slog.Logger, ln net.Listener) error {
	ops, err := newOperations(ctx, cfg, d, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer ops.Close()
	e := newServer(cfg, d, log, ops)
	srv := httpserver.New(e, httpserver.Options{
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		ReadTimeout:       cfg.HTTPReadTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    config.MaxServerHeaderBytes,
		Log:               log,
	})
	log.Info("listening", "addr", ln.Addr().String())
	return httpserver.Run(ctx, srv, ln, cfg.ShutdownGrace, log)
}

// operations are the operator's kit around the handlers: the metrics
// registry and the response cache store (nil when disabled).
type operations struct {
	metrics *observe.Metrics
	cache   cache.Store
}

func newOperations(ctx context.Context, cfg config.Config, d *db.DB, log *slog.Logger) (*operations, error) {
	ops := &operations{metrics: observe.NewMetrics()}
	ops.metrics.RegisterDBStats(d.Bun().DB.Stats)
	switch {
	case !cfg.CacheEnabled:
	case cfg.RedisURL != "":
		r, err := cache.NewRedis(cache.RedisOptions{
			URL: cfg.RedisURL, Timeout: cfg.RedisTimeout, KeyPrefix: cfg.RedisKeyPrefix, Log: log,
		})
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.RedisTimeout)
		defer cancel()
		if err := r.Ping(pctx); err != nil {
			log.Warn("response cache: redis does not answer; the database answers until it does", "err", err)
		} else {
			log.Info("response cache: redis", "prefix", cfg.RedisKeyPrefix)
		}
		ops.cache = r
	default:
		ops.cache = cache.NewMemory(cfg.CacheEntries, cfg.CacheMaxBytes, nil)
	}
	return ops, nil
}

// Close releases the cache store's connections.
func (o *operations) Close() {
	if o.cache != nil {
		_ = o.cache.Close()
	}
}

// Routes outside the two faces.
const (
	routeLiveness  = "/health/liveness"
	routeReadiness = "/health/readiness"
	routeMetrics   = "/metrics"
)

// newServer assembles both faces over one query layer, with the operator's
// kit around them.
func newServer(cfg config.Config, d *db.DB, log *slog.Logger, ops *operations) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = rest.ErrorHandler(func(c echo.Context, err error) {
		ctx := c.Request().Context()
		log.ErrorContext(ctx, "request failed", "method", c.Request().Method, "path", c.Request().URL.Path,
			"err", err, "request_id", observe.RequestID(ctx))
	})
	e.Pre(rest.CanonicalRoute)
	// Order matters: the observer is outermost so it sees the final status
	// and every response carries the request id; the deadline covers the
	// cache store and the handlers.
	e.Use(
		observe.Middleware(observe.MiddlewareOptions{
			Log: log, Metrics: ops.metrics, Routes: e.Routes,
			Quiet: []string{routeLiveness, routeReadiness, routeMetrics},
		}),
		middleware.Recover(),
		rest.CORS,
		// Request limits (issue 6): 414, 431, 413, and 429 per client IP.
		limits.Middleware(limits.Options{
			MaxURLLength: cfg.MaxURLLength, MaxHeaderBytes: cfg.MaxHeaderBytes, MaxBodyBytes: cfg.MaxBodyBytes,
			RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
			Exempt: []string{routeLiveness, routeReadiness, routeMetrics},
		}),
		middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024}),
		requestDeadline(cfg.RequestTimeout),
	)
	if ops.cache != nil {
		// List endpoints only: single lookups never come from the cache.
		e.Use(cache.Middleware(cache.Options{
			Store: ops.cache, Routes: []string{rest.RouteSchedules}, Timeout: cfg.RedisTimeout, Log: log,
			Result: ops.metrics.CacheResult, WriteError: ops.metrics.CacheWriteError,
			Version: func(ctx context.Context) (string, error) {
				v, err := d.SchedulesVersion(ctx)
				if err != nil {
					return "", rest.DatabaseError(err)
				}
				return v, nil
			},
		}))
	}

	rest.New(d, rest.Options{
		Defaults:     model.EntityDefaults{Shard: cfg.Shard, Realm: cfg.Realm},
		LimitDefault: cfg.ResponseLimitDef,
		LimitMax:     cfg.ResponseLimitMax,
	}).Register(e)

	// --- GraphQL face (issue 3): the API and its GraphiQL explorer ---
	gql := echo.WrapHandler(graph.NewHandler(d, graph.Options{
		Defaults:         model.EntityDefaults{Shard: cfg.Shard, Realm: cfg.Realm},
		LimitDefault:     cfg.ResponseLimitDef,
		LimitMax:         cfg.ResponseLimitMax,
		ScheduleLifetime: cfg.ScheduleLifetime,
		Log:              log,
		NoIntrospection:  !cfg.GraphQLIntrospection,
		MaxBodyBytes:     cfg.GraphQLMaxBodyBytes,
	}))
	e.Match([]string{http.MethodGet, http.MethodHead, http.MethodPost}, graph.Endpoint, gql)
	e.Match([]string{http.MethodGet, http.MethodHead}, graph.Endpoint+"/explorer/*", gql)
	// --- end GraphQL face ---

	e.GET(routeLiveness, func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "UP"})
	})
	e.GET(routeReadiness, func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.Ping(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "DOWN"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "UP"})
	})
	apidocs.Register(e, openAPISpec)
	e.GET(routeMetrics, echo.WrapHandler(ops.metrics.Handler()))
	return e
}

// requestDeadline gives every request, and so every query it makes, at most
// timeout. A request that fails once its deadline has passed answers as a
// failed query does (the mirror node's 503, rendered and logged by the error
// handler), whatever the error it failed with.
func requestDeadline(timeout time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			err := next(c)
			if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || c.Response().Committed {
				return err
			}
			return rest.DatabaseError(err)
		}
	}
}
