package cache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/nodehttp"
)

// Replayed are the response headers an entry keeps: those the handlers set.
// Headers of the outer middleware (CORS, request id, compression) are set
// anew on every request.
var Replayed = []string{"Cache-Control", "Content-Type", "ETag", "Link"}

// MaxBody is the largest body stored; larger answers are served, not kept.
const MaxBody = 4 << 20

// Options configure Middleware.
type Options struct {
	Store Store
	// Routes are the route templates (echo.Context.Path) whose GET answers
	// are cached, each with the version of the data its answers are made
	// of: entries are kept per version, so reloading those tables retires
	// every entry made of them at once. A route without a version is not
	// cached (its entries could outlive its data). Every other request
	// passes through untouched.
	Routes map[string]Version
	// Timeout bounds each store operation (default 250ms).
	Timeout time.Duration
	Log     *slog.Logger
	// Result, if set, is told every lookup: hit, miss or error.
	Result func(store, result string)
	// WriteError, if set, is told every failed write.
	WriteError func(store string)
}

// Version names the current storage of some data. When it fails, its error
// is the request's answer (for Echo's error handler): the handler's own
// query would only fail the same way, after waiting once more for the
// database.
type Version func(ctx context.Context) (string, error)

// Middleware answers a GET of one of o.Routes from the store when it holds a
// live entry, and otherwise lets the handler answer and stores a 200 answer
// for its Cache-Control max-age (none, zero, no-store or private: not
// stored). A store that fails is logged and skipped: the handler answers.
//
// The key is the request target as the client sent it, path and raw query:
// answers repeat the client's spelling of the path in their Link header.
func Middleware(o Options) echo.MiddlewareFunc {
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Result == nil {
		o.Result = func(string, string) {}
	}
	if o.WriteError == nil {
		o.WriteError = func(string) {}
	}
	routes := map[string]Version{}
	for r, v := range o.Routes {
		if v != nil {
			routes[r] = v
		}
	}
	store := o.Store.Name()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			version := routes[c.Path()]
			if req.Method != http.MethodGet || version == nil {
				return next(c)
			}
			key := req.RequestURI
			if key == "" { // a request built in process rather than read from a connection
				key = req.URL.RequestURI()
			}
			v, err := version(req.Context())
			if err != nil {
				return err
			}
			key = v + " " + key

			ctx, cancel := context.WithTimeout(req.Context(), o.Timeout)
			e, ok, err := o.Store.Get(ctx, key)
			cancel()
			switch {
			case err != nil:
				o.Result(store, "error")
				if !errors.Is(err, ErrUnavailable) {
					o.Log.WarnContext(req.Context(), "response cache: lookup failed", "store", store, "err", err)
				}
			case ok:
				o.Result(store, "hit")
				return replay(c, e)
			default:
				o.Result(store, "miss")
			}

			res := c.Response()
			rec := &recorder{ResponseWriter: res.Writer}
			res.Writer = rec
			herr := next(c)
			res.Writer = rec.ResponseWriter
			if herr != nil || err != nil || res.Status != http.StatusOK || rec.overflow {
				return herr
			}
			ttl := maxAge(res.Header().Get("Cache-Control"))
			if ttl <= 0 {
				return nil
			}
			entry := Entry{Status: res.Status, Header: http.Header{}, Body: rec.body.Bytes()}
			for _, h := range Replayed {
				for _, v := range res.Header().Values(h) {
					entry.Header.Add(h, v)
				}
			}
			// The answer is complete: a client that hangs up now must not
			// stop it from being stored.
			ctx, cancel = context.WithTimeout(context.WithoutCancel(req.Context()), o.Timeout)
			defer cancel()
			if err := o.Store.Set(ctx, key, entry, ttl); err != nil {
				o.WriteError(store)
				if !errors.Is(err, ErrUnavailable) {
					o.Log.WarnContext(req.Context(), "response cache: write failed", "store", store, "err", err)
				}
			}
			return nil
		}
	}
}

// replay writes a stored answer, or 304 to a client that already has it, as
// the handler would (rest.sendNode).
func replay(c echo.Context, e Entry) error {
	hdr := c.Response().Header()
	set := func(h string) {
		hdr.Del(h)
		for _, v := range e.Header.Values(h) {
			hdr.Add(h, v)
		}
	}
	for _, h := range Replayed {
		if h != "Content-Type" {
			set(h)
		}
	}
	if inm := c.Request().Header.Get("If-None-Match"); inm != "" && e.Status == http.StatusOK {
		if tag := e.Header.Get("ETag"); tag != "" && nodehttp.ETagMatches(inm, tag) {
			return c.NoContent(http.StatusNotModified)
		}
	}
	set("Content-Type")
	c.Response().WriteHeader(e.Status)
	_, err := c.Response().Write(e.Body)
	return err
}

// maxAge is the lifetime a Cache-Control value allows a shared cache: its
// s-maxage or max-age, or 0 when it forbids storing or says nothing.
func maxAge(cc string) time.Duration {
	var age, sage int64 = -1, -1
	for _, d := range strings.Split(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache", "private":
			return 0
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil {
				age = n
			}
		case "s-maxage":
			if n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil {
				sage = n
			}
		}
	}
	if sage >= 0 {
		age = sage
	}
	if age <= 0 {
		return 0
	}
	return min(time.Duration(age)*time.Second, MaxLifetime)
}

// recorder passes the body on and keeps a copy of it, up to MaxBody.
type recorder struct {
	http.ResponseWriter
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.overflow {
		if r.body.Len()+len(b) > MaxBody {
			r.overflow = true
			r.body = bytes.Buffer{}
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

// Flush passes a flush on when the writer below can.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer below.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
