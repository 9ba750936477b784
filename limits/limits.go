// Package limits refuses requests that are too large, and clients that ask
// too often, before any handler runs, each with a clear 4xx in the mirror
// node's error body rather than a dropped connection:
//
//   - 414 when the request-target (path and query string) is longer than
//     MaxURLLength bytes;
//   - 431 when the request's header fields add up to more than
//     MaxHeaderBytes (name, value and 4 bytes of framing per field);
//   - 413 when the body is longer than MaxBodyBytes (at once when its
//     Content-Length says so, else when a handler reads past the limit);
//   - 429 with Retry-After when a client IP exceeds RateLimit requests per
//     second (with bursts of RateBurst); off when RateLimit is 0.
//
// Requests whose head exceeds the HTTP server's own MaxHeaderBytes never get
// here: net/http answers them with a plain-text 431.
package limits

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"mirrorql/nodehttp"
)

// Options configure Middleware. A zero limit is no limit.
type Options struct {
	MaxURLLength   int
	MaxHeaderBytes int
	MaxBodyBytes   int64
	// RateLimit is the sustained requests per second allowed to one client
	// IP (the connection's peer address: behind a reverse proxy, every
	// client shares the proxy's address, so limit there instead); 0 is off.
	RateLimit float64
	// RateBurst is how many requests a client may send at once (at least 1).
	RateBurst int
	// Exempt paths are never rate limited (health probes).
	Exempt []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Middleware enforces o.
func Middleware(o Options) echo.MiddlewareFunc {
	if o.Now == nil {
		o.Now = time.Now
	}
	var rl *rateLimiter
	if o.RateLimit > 0 {
		rl = newRateLimiter(o.RateLimit, max(o.RateBurst, 1), o.Now)
	}
	exempt := map[string]bool{}
	for _, p := range o.Exempt {
		exempt[p] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if o.MaxURLLength > 0 && len(r.RequestURI) > o.MaxURLLength {
				return refuse(c, http.StatusRequestURITooLong,
					fmt.Sprintf("Request URL too long: at most %d bytes", o.MaxURLLength))
			}
			if o.MaxHeaderBytes > 0 && headerBytes(r) > o.MaxHeaderBytes {
				return refuse(c, http.StatusRequestHeaderFieldsTooLarge,
					fmt.Sprintf("Request header fields too large: at most %d bytes", o.MaxHeaderBytes))
			}
			if o.MaxBodyBytes > 0 && r.Body != nil && r.Body != http.NoBody {
				if r.ContentLength > o.MaxBodyBytes {
					return refuse(c, http.StatusRequestEntityTooLarge,
						fmt.Sprintf("Request body too large: at most %d bytes", o.MaxBodyBytes))
				}
				r.Body = http.MaxBytesReader(c.Response(), r.Body, o.MaxBodyBytes)
			}
			if rl != nil && !exempt[r.URL.Path] {
				if wait := rl.take(clientIP(r)); wait > 0 {
					c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
					return refuse(c, http.StatusTooManyRequests, "Too many requests")
				}
			}
			return next(c)
		}
	}
}

// refuse answers status with the Node service's error body
// (nodehttp.AppendError, the bytes the REST face writes).
func refuse(c echo.Context, status int, message string) error {
	b := nodehttp.AppendError(nil, message)
	// The connection may still carry an unread body: do not reuse it.
	if status == http.StatusRequestEntityTooLarge || status == http.StatusRequestHeaderFieldsTooLarge {
		c.Response().Header().Set("Connection", "close")
	}
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	return c.Blob(status, nodehttp.ContentType, b)
}

// headerBytes is the size of the header fields as sent: "Name: value\r\n"
// for each, Host included.
func headerBytes(r *http.Request) int {
	n := len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// rateLimiter is one token bucket per client IP. Buckets unused for a while
// (full again) are swept, so the map cannot grow without bound from many
// clients.
type rateLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time
	idle  time.Duration // a bucket untouched this long is full: forget it

	mu        sync.Mutex
	clients   map[string]*client
	lastSweep time.Time
}

type client struct {
	lim  *rate.Limiter
	seen time.Time
}

func newRateLimiter(perSecond float64, burst int, now func() time.Time) *rateLimiter {
	idle := time.Duration(float64(burst)/perSecond*float64(time.Second)) + time.Minute
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, now: now, idle: idle,
		clients: map[string]*client{}, lastSweep: now()}
}

// take spends one token of ip's bucket; when there is none it spends
// nothing and returns how long until there is.
func (l *rateLimiter) take(ip string) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > l.idle {
		for k, c := range l.clients {
			if now.Sub(c.seen) > l.idle {
				delete(l.clients, k)
			}
		}
		l.lastSweep = now
	}
	c := l.clients[ip]
	if c == nil {
		c = &client{lim: rate.NewLimiter(l.limit, l.burst)}
		l.clients[ip] = c
	}
	c.seen = now
	res := c.lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// size is the number of client buckets held (tests).
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}
