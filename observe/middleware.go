package observe

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// RouteUnmatched is the route label of requests that match no registered
// route, so that probing arbitrary paths cannot grow the label sets.
const RouteUnmatched = "unmatched"

// Faces of the service, the face label of the HTTP metrics.
const (
	FaceREST    = "rest"
	FaceGraphQL = "graphql"
	FaceOps     = "ops" // health, metrics, API docs, and anything unmatched outside the two APIs
)

// MiddlewareOptions configure Middleware.
type MiddlewareOptions struct {
	Log     *slog.Logger
	Metrics *Metrics
	// Routes lists the registered routes (echo.Echo.Routes); it is read once,
	// at the first request, when every route has been registered.
	Routes func() []*echo.Route
	// Quiet route templates are logged at debug level rather than info:
	// probes and scrapes that would drown the access log.
	Quiet []string
	// Stream tells the requests that open a subscription stream: they are
	// counted and logged when they end, but neither held in flight nor timed,
	// so that streams of hours do not swamp the request latency histogram.
	Stream func(*http.Request) bool
}

// Middleware is the outermost middleware of the service. It takes the
// client's X-Request-Id (sanitised) or makes one, echoes it in the response
// and stores it in the request context (Echo's RequestID middleware would
// echo and hand on a client's id unchecked, and it is logged: hence ours); hands an error returned by the chain
// to the error handler, so the status is known; then counts the request,
// observes its duration and logs one line about it.
func Middleware(o MiddlewareOptions) echo.MiddlewareFunc {
	var (
		once  sync.Once
		known map[string]bool
	)
	quiet := map[string]bool{}
	for _, r := range o.Quiet {
		quiet[r] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			once.Do(func() {
				known = map[string]bool{}
				if o.Routes != nil {
					for _, r := range o.Routes() {
						known[r.Path] = true
					}
				}
			})
			r := c.Request()
			id := SanitizeRequestID(r.Header.Get(HeaderRequestID))
			if id == "" {
				id = NewRequestID()
			}
			c.Response().Header().Set(HeaderRequestID, id)
			ctx := WithRequestID(r.Context(), id)
			c.SetRequest(r.WithContext(ctx))

			route := c.Path()
			if !known[route] {
				route = RouteUnmatched
			}
			face := faceOf(route, r.URL.Path)
			method := methodLabel(r.Method)
			stream := o.Stream != nil && o.Stream(r)
			if o.Metrics != nil && !stream {
				o.Metrics.inFlight.WithLabelValues(face).Inc()
				defer o.Metrics.inFlight.WithLabelValues(face).Dec()
			}

			if err := next(c); err != nil {
				c.Error(err)
			}

			elapsed := time.Since(start)
			status := c.Response().Status
			if o.Metrics != nil {
				o.Metrics.requests.WithLabelValues(face, route, method, strconv.Itoa(status)).Inc()
				if !stream {
					o.Metrics.duration.WithLabelValues(face, route, method).Observe(elapsed.Seconds())
				}
			}
			if o.Log != nil {
				level := slog.LevelInfo
				if quiet[route] && status < 500 {
					level = slog.LevelDebug
				}
				// Straight to the handler: Logger.LogAttrs would also walk
				// the stack for a source location the handlers never print.
				if h := o.Log.Handler(); h.Enabled(ctx, level) {
					rec := slog.NewRecord(start.Add(elapsed), level, accessMessage, 0)
					rec.AddAttrs(
						slog.String("method", r.Method),
						slog.String("route", route),
						slog.String("path", r.URL.Path),
						slog.Int("status", status),
						slog.Float64("duration_ms", math.Round(float64(elapsed.Microseconds()))/1000),
						slog.Int64("bytes", c.Response().Size),
						slog.String("face", face),
						slog.String("request_id", id),
					)
					_ = h.Handle(ctx, rec) // as Logger's methods: a log that cannot be written is not the request's failure
				}
			}
			return nil
		}
	}
}

// faceOf tells which face a route belongs to; unmatched requests go by path.
func faceOf(route, path string) string {
	p := route
	if route == RouteUnmatched {
		p = path
	}
	switch {
	case strings.HasPrefix(p, "/api/v1/docs"):
		return FaceOps
	case strings.HasPrefix(p, "/api/"):
		return FaceREST
	case p == "/graphql" || strings.HasPrefix(p, "/graphql/"):
		return FaceGraphQL
	}
	return FaceOps
}

// methodLabel keeps the method label set closed.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}
