// Package service assembles the HTTP service: both faces (REST and GraphQL)
// over one query layer, the operator's routes (health, metrics, API docs)
// and the middleware chain around them. The binary serves it; the benchmark
// profiles the same chain in process.
package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/redis/go-redis/v9"

	"mirrorql/apidocs"
	"mirrorql/app"
	"mirrorql/cache"
	"mirrorql/config"
	"mirrorql/dashboard"
	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/limits"
	"mirrorql/live"
	"mirrorql/model"
	"mirrorql/observe"
	"mirrorql/rest"
	"mirrorql/service/policy"
)

// Operations are the operator's kit around the handlers: the metrics
// registry and the response cache store (nil when disabled).
type Operations struct {
	// ledger is the core every face asks (REST, GraphQL, consensus): one
	// door to the data, with the operator's rules given to it once.
	ledger  *app.Ledger
	metrics *observe.Metrics
	cache   cache.Store
	// streams feed the GraphQL subscriptions from the live hub (nil
	// when they are off); stopLive ends the hub's poller and Redis waker.
	streams  *graph.Streams
	hub      *live.Hub // nil when subscriptions are off
	grpc     *observe.GRPCMetrics
	stopLive context.CancelFunc
	liveDone chan struct{}
	// stopping closes when the shutdown starts (EndStreams): the gRPC
	// face's health Watch streams end then.
	stopping     chan struct{}
	stoppingOnce sync.Once
}

// NewOperations builds them as cfg says; Close releases them.
func NewOperations(ctx context.Context, cfg config.Config, d *db.DB, log *slog.Logger) (*Operations, error) {
	ops := &Operations{metrics: observe.NewMetrics(), stopping: make(chan struct{})}
	ops.ledger = app.New(d, app.Rules{
		Entities: model.EntityDefaults{Shard: cfg.Shard, Realm: cfg.Realm},
		Pages:    app.PageSizes{Default: cfg.ResponseLimitDef, Max: cfg.ResponseLimitMax},
	})
	ops.grpc = ops.metrics.GRPC()
	ops.metrics.RegisterDBStats(d.Bun().DB.Stats)
	ops.metrics.RegisterLayout(func() map[string]string { return d.Layout().Labels() }, db.FallbackReasons, d.Fallbacks().Count)
	// The layout decides how every statement reads (v1 flat, v2 by
	// partition): learn it before the first request where the database
	// answers, then keep it current (new partitions, a replaced database).
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := d.LearnLayout(lctx, log); err != nil {
		log.Warn("database layout not known yet; reading as on v1 until it is", "err", err)
	}
	cancel()
	// Open the pool's connections before the first request, so that load
	// arriving at once waits for them instead of connecting (db.Warm).
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	t := time.Now()
	if n, err := d.Warm(wctx); err != nil {
		log.Warn("database pool not filled; it fills on demand", "open", n, "err", err)
	} else {
		log.Info("database pool filled", "open", n, "took", time.Since(t).Round(time.Millisecond).String())
	}
	cancel()
	go d.KeepLayout(ctx, cfg.LayoutRefresh, log)
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
	ops.startLive(cfg, d, log)
	return ops, nil
}

// startLive starts the live hub's poller (and its Redis wake-up when
// configured), unless subscriptions are off. It runs until Close, not until
// the signal that starts a shutdown: the streams complete first.
func (o *Operations) startLive(cfg config.Config, d *db.DB, log *slog.Logger) {
	o.liveDone = make(chan struct{})
	if !cfg.LiveEnabled {
		o.streams = graph.NewStreams(nil)
		o.stopLive = func() {}
		close(o.liveDone)
		return
	}
	hub := live.New(d, live.Options{
		PollInterval: cfg.LivePollInterval, MaxSubscriptions: cfg.LiveMaxSubscriptions, Buffer: cfg.LiveBuffer,
		Outage: cfg.LiveOutage, Log: log, Metrics: o.metrics.Live(),
	})
	o.streams = graph.NewStreams(hub)
	o.hub = hub
	ctx, cancel := context.WithCancel(context.Background())
	o.stopLive = cancel
	var client *redis.Client
	if cfg.LiveRedisURL != "" {
		opts, _ := redis.ParseURL(cfg.LiveRedisURL) // config checked it
		client = redis.NewClient(opts)
	}
	go func() {
		defer close(o.liveDone)
		if client == nil {
			hub.Run(ctx)
			return
		}
		defer client.Close()
		go live.WakeOnRedis(ctx, hub, client, liveRechecks, log)
		hub.Run(ctx)
	}()
}

// liveRechecks: after an importer's publication the hub polls at once and
// again after each of these, as the publication precedes the commit by a
// few milliseconds to tens of them.
var liveRechecks = []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 90 * time.Millisecond}

// EndStreams ends every subscription of both faces (GraphQL's complete,
// gRPC's answer UNAVAILABLE so that the SDKs resubscribe) and closes every
// WebSocket (httpserver.Run calls it at shutdown).
func (o *Operations) EndStreams(ctx context.Context) error {
	o.stoppingOnce.Do(func() { close(o.stopping) })
	return o.streams.Shutdown(ctx)
}

// Close stops the live poller and releases the cache store's connections.
func (o *Operations) Close() {
	o.stopLive()
	<-o.liveDone
	if o.cache != nil {
		_ = o.cache.Close()
	}
}

// Routes outside the two faces.
const (
	RouteLiveness  = "/health/liveness"
	RouteReadiness = "/health/readiness"
	RouteMetrics   = "/metrics"
	// RouteFavicon is where browsers look for a site's icon unless a page
	// names one: the SVG icon of the dashboard.
	RouteFavicon = "/favicon.ico"
)

// faviconETag is the strong validator of the icon's bytes.
var faviconETag = func() string {
	sum := sha256.Sum256(dashboard.Favicon)
	return `"` + hex.EncodeToString(sum[:6]) + `"`
}()

// serveFavicon answers RouteFavicon: the embedded SVG icon, kept by browsers
// for a week and revalidated by its ETag after.
func serveFavicon(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "public, max-age=604800")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", faviconETag)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(dashboard.Favicon))
	return nil
}

// New assembles both faces over one query layer, with the operator's kit
// around them; openAPI is the description /api/v1/docs shows.
func New(cfg config.Config, d *db.DB, log *slog.Logger, ops *Operations, openAPI []byte) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = policy.ErrorHandler(func(c echo.Context, err error) {
		ctx := c.Request().Context()
		log.ErrorContext(ctx, "request failed", "method", c.Request().Method, "path", c.Request().URL.Path,
			"err", err, "request_id", observe.RequestID(ctx))
	})
	e.Pre(rest.CanonicalRoute)
	// Order matters: the observer is outermost so it sees the final status
	// and every response carries the request id; the deadline covers the
	// cache store and the handlers.
	chain := []echo.MiddlewareFunc{
		observe.Middleware(observe.MiddlewareOptions{
			Log: log, Metrics: ops.metrics, Routes: e.Routes,
			Quiet:  []string{RouteLiveness, RouteReadiness, RouteMetrics},
			Stream: graph.IsStream,
		}),
		middleware.Recover(),
		policy.CORS,
		// Request limits: 414, 431, 413, and 429 per client IP.
		limits.Middleware(limits.Options{
			MaxURLLength: cfg.MaxURLLength, MaxHeaderBytes: cfg.MaxHeaderBytes, MaxBodyBytes: cfg.MaxBodyBytes,
			RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
			Exempt: []string{RouteLiveness, RouteReadiness, RouteMetrics},
		}),
		// A subscription stream is never compressed into one buffer nor
		// cut at the request deadline: it lives for hours, each write
		// bounded by the stream transports.
		middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024,
			Skipper: func(c echo.Context) bool { return graph.IsStream(c.Request()) }}),
		RequestDeadline(cfg.RequestTimeout),
	}
	if ops.cache != nil {
		// List endpoints only: single lookups never come from the cache.
		chain = append(chain, cache.Middleware(cache.Options{
			Store: ops.cache, Routes: cachedRoutes(ops.ledger), Timeout: cfg.RedisTimeout, Log: log,
			Result: ops.metrics.CacheResult, WriteError: ops.metrics.CacheWriteError,
		}))
	}
	e.Use(composedOnce(chain...))

	// One door to the data for every face: the core over the query layer.
	rest.New(ops.ledger, rest.Options{}).Register(e)

	// --- GraphQL face: the API and its GraphiQL explorer ---
	gql := echo.WrapHandler(graph.NewHandler(ops.ledger, graph.Options{
		ScheduleLifetime:     cfg.ScheduleLifetime,
		Log:                  log,
		NoIntrospection:      !cfg.GraphQLIntrospection,
		NoCompiledOperations: !cfg.GraphQLCompiled,
		OnPlanPanic:          ops.metrics.PlanPanic,
		MaxBodyBytes:         cfg.GraphQLMaxBodyBytes,
		Streams:              ops.streams,
		Stream: graph.StreamOptions{
			KeepAlive: cfg.LiveKeepAlive, WriteTimeout: cfg.LiveWriteTimeout, InitTimeout: cfg.GraphQLWSInitTimeout,
			Origins: cfg.WSOrigins(), MaxPerConnection: cfg.LiveMaxPerConnection,
		},
		NotFound: policy.NotFoundHandler(),
	}))
	e.Match([]string{http.MethodGet, http.MethodHead, http.MethodPost}, graph.Endpoint, gql)
	e.Match([]string{http.MethodGet, http.MethodHead}, graph.Endpoint+"/explorer/*", gql)
	if cfg.DashboardEnabled {
		dashboard.Register(e, graph.Endpoint) // a page over the GraphQL API alone
	}
	// --- end GraphQL face ---

	e.GET(RouteLiveness, func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "UP"})
	})
	e.GET(RouteReadiness, func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.Ping(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "DOWN"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "UP"})
	})
	apidocs.Register(e, openAPI)
	e.Match([]string{http.MethodGet, http.MethodHead}, RouteFavicon, serveFavicon)
	e.GET(RouteMetrics, echo.WrapHandler(ops.metrics.Handler()))
	return e
}

// composedOnce is mws as one middleware, composed when the service is
// built. Echo v4 applies its middleware list anew on every request: a
// closure per middleware per request, and the gzip middleware's buffer
// pools made afresh each time, so never reused — a share of a by-sequence
// request's allocations (bench/results/decisions-2026-11.md). Composed once, the
// chain ends in the
// handler the router found for the request, which is what Echo hands the
// first middleware.
func composedOnce(mws ...echo.MiddlewareFunc) echo.MiddlewareFunc {
	h := func(c echo.Context) error { return c.Handler()(c) }
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return func(echo.HandlerFunc) echo.HandlerFunc { return h }
}

// RequestDeadline gives every request, and so every query it makes, at most
// timeout. A request that fails once its deadline has passed answers as a
// failed query does (the mirror node's 503, rendered and logged by the error
// handler), whatever the error it failed with.
func RequestDeadline(timeout time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if graph.IsStream(c.Request()) {
				return next(c)
			}
			ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			err := next(c)
			if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || c.Response().Committed {
				return err
			}
			return app.AsUnavailable(err) // a read's failure already is one
		}
	}
}

// cachedRoutes are the routes the response cache keeps (rest's table), each
// with the read of the version its answers follow. A route whose data has
// no read here gets none, and the cache does not keep it
// (TestCachedRoutesHaveVersions fails).
func cachedRoutes(l *app.Ledger) map[string]cache.Version {
	versions := map[rest.Version]cache.Version{
		rest.VersionSchedules: l.Store().SchedulesVersion,
	}
	out := map[string]cache.Version{}
	for path, v := range rest.CachedRoutes() {
		out[path] = versions[v]
	}
	return out
}
