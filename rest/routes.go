// Package rest is the REST face: Echo handlers that reproduce the mirror node
// REST API (docs/reference/behavior.md) over the shared query layer.
package rest

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"mirrorql/app"
	"mirrorql/nodehttp"
)

// Route templates as Echo registers them (and as metrics label them).
const (
	RouteTopicMessages      = "/api/v1/topics/:topicId/messages"
	RouteTopicMessage       = "/api/v1/topics/:topicId/messages/:sequenceNumber"
	RouteMessageByTimestamp = "/api/v1/topics/messages/:timestamp"
	RouteTopic              = "/api/v1/topics/:id"
	RouteSchedules          = "/api/v1/schedules"
	RouteSchedule           = "/api/v1/schedules/:scheduleId"
)

// Route is one route of the mirror node's REST API that mirrorql serves.
type Route struct {
	// Name is the handler's name (topicMessages, schedules, …).
	Name string
	// Path is the route template, parameters as ":name".
	Path string
	// Service is the mirror node program that serves it upstream: "rest"
	// (the Node module, rest/server.js) or "rest-java".
	Service string
	// Cached names the data a list route's GET answers are made of, by
	// whose version the response cache keeps them (service.go reads each
	// Version); "" for a route the cache never keeps.
	Cached Version

	segments []string        // lower-case literals; "" for a parameter
	query    map[string]bool // the query parameters its handler accepts
	serve    func(*Handlers, echo.Context) error
}

// QueryParams are the query parameters the route accepts, sorted; every
// other is refused (`Unknown query parameter`).
func (r Route) QueryParams() []string { return slices.Sorted(maps.Keys(r.query)) }

// PathParams are the names of the route's path parameters, in order.
func (r Route) PathParams() []string {
	var out []string
	for _, seg := range strings.Split(r.Path, "/") {
		if name, ok := strings.CutPrefix(seg, ":"); ok {
			out = append(out, name)
		}
	}
	return out
}

// Version names the data a cached route's answers are made of: the
// response cache keys them by its version, so that reloading those tables
// retires every answer made of them at once.
type Version string

// VersionSchedules is the schedule tables' (schedule, entity,
// transaction_signature): app.Ledger's SchedulesVersion.
const VersionSchedules Version = "schedules"

// Service names of Route.Service.
const (
	ServiceNode = "rest"
	ServiceJava = "rest-java"
)

// routes is the REST face's routing table, in the order requests meet it:
// first the ingress rule that sends GET /api/v1/topics/{id} to rest-java
// (docs/reference/behavior.md §0), then the Node module's routes in the
// order rest/server.js registers them. Matching is Express's (Match); a path
// under /api/v1 that matches none is the Node module's JSON 404.
var routes = []Route{
	{Name: "topic", Path: RouteTopic, Service: ServiceJava, serve: (*Handlers).topic},
	{Name: "schedules", Path: RouteSchedules, Service: ServiceNode, Cached: VersionSchedules, query: acceptedScheduleParams, serve: (*Handlers).schedules},
	{Name: "schedule", Path: RouteSchedule, Service: ServiceNode, serve: (*Handlers).schedule},
	{Name: "topicMessages", Path: RouteTopicMessages, Service: ServiceNode, query: acceptedMessageParams, serve: (*Handlers).topicMessages},
	{Name: "topicMessage", Path: RouteTopicMessage, Service: ServiceNode, serve: (*Handlers).topicMessage},
	{Name: "messageByTimestamp", Path: RouteMessageByTimestamp, Service: ServiceNode, serve: (*Handlers).messageByTimestamp},
}

func init() {
	for i := range routes {
		routes[i].segments = strings.Split(strings.TrimPrefix(routes[i].Path, "/"), "/")
		for j, seg := range routes[i].segments {
			if strings.HasPrefix(seg, ":") {
				routes[i].segments[j] = ""
			}
		}
	}
}

// Routes is the routing table (a copy), in matching order: the one list of
// the REST routes that the service, the response cache and the Helm chart's
// tests read.
func Routes() []Route { return append([]Route(nil), routes...) }

// CachedRoutes are the templates of the routes the response cache may keep,
// each with the data its answers follow.
func CachedRoutes() map[string]Version {
	out := map[string]Version{}
	for _, r := range routes {
		if r.Cached != "" {
			out[r.Path] = r.Cached
		}
	}
	return out
}

// javaTopic is the ingress rule's expression for rest-java's topic route,
// matched against the path as sent: `^/api/v1/topics/(\d+\.){0,2}\d+$`.
func javaTopic(path string) bool {
	const prefix = "/api/v1/topics/"
	if len(path) <= len(prefix) || path[:len(prefix)] != prefix {
		return false
	}
	dots, digits := 0, 0
	for i := len(prefix); i < len(path); i++ {
		switch c := path[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && digits > 0 && dots < 2:
			dots, digits = dots+1, 0
		default:
			return false
		}
	}
	return digits > 0
}

// Match finds the route for a request path as sent (percent-encoding
// untouched), as the ingress and then Express choose it: the first route in
// order whose literal segments equal the path's, ignoring ASCII case, whose
// parameters are each one non-empty segment (never holding a '/'), with at
// most one trailing slash after the last segment. ok is false when no route
// matches: the path is the Node module's 404.
func Match(path string) (r *Route, ok bool) {
	if javaTopic(path) {
		return &routes[0], true
	}
	for i := 1; i < len(routes); i++ {
		if matchSegments(routes[i].segments, path) {
			return &routes[i], true
		}
	}
	return nil, false
}

// matchSegments reports whether path is "/" + segs joined by "/", with at
// most one trailing "/", without allocating.
func matchSegments(segs []string, path string) bool {
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	for _, lit := range segs {
		if len(path) == 0 || path[0] != '/' {
			return false
		}
		var seg string
		seg, path = cutSegment(path)
		if seg == "" || (lit != "" && !asciiEqualFold(lit, seg)) {
			return false
		}
	}
	return path == ""
}

// cutSegment splits path, which starts with '/', into its first segment and
// the rest (from the next '/' on).
func cutSegment(path string) (seg, rest string) {
	path = path[1:]
	if end := strings.IndexByte(path, '/'); end >= 0 {
		return path[:end], path[end:]
	}
	return path, ""
}

// asciiEqualFold is a case-insensitive comparison of ASCII letters only, as
// a JavaScript regular expression with the i flag compares an ASCII
// literal (strings.EqualFold would also fold U+017F to 's').
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

const originalPathKey = "mirrorql.originalPath"

// notFoundPath is the raw path CanonicalRoute gives Echo for a path under
// /api/v1 that no route matches: Echo has no route for it, so it answers
// the JSON 404.
const notFoundPath = "/api/v1/-"

// Register mounts the routes on e. Install CanonicalRoute as a Pre
// middleware too: it is what applies the table's matching.
func (h *Handlers) Register(e *echo.Echo) {
	get := []string{http.MethodGet, http.MethodHead}
	for i := range routes {
		r := &routes[i]
		serve := func(c echo.Context) error { return r.serve(h, c) }
		if r.Service == ServiceJava {
			e.Any(r.Path, serve) // its handler answers other methods with rest-java's 405
		} else {
			e.Match(get, r.Path, serve)
		}
	}
}

// CanonicalRoute is an Echo Pre middleware that routes a request under
// /api/v1 by the routing table (Match) rather than by Echo's rules: it
// rewrites the path to the matched route's exact spelling, so that Echo
// finds that route and no other, or to a path Echo has no route for. The
// path as the client wrote it is remembered when rewritten (links repeat
// it); parameters keep their spelling.
func CanonicalRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		path := requestPath(r)
		if len(path) < 8 || !asciiEqualFold(path[:8], "/api/v1/") || strings.HasPrefix(path, "/api/v1/docs") {
			return next(c)
		}
		route, ok := Match(path)
		if !ok {
			// Echo routes by the raw path (echo.GetPath): it finds no route
			// here, while the decoded path, which the access log shows, stays
			// the client's.
			r.URL.RawPath = notFoundPath
			return next(c)
		}
		if canonical(route.segments, path) {
			return next(c)
		}
		if u, err := url.Parse(canonicalPath(route.segments, path)); err == nil {
			// Only a rewritten path needs remembering (originalPath):
			// Echo's context store is a map made on first use.
			c.Set(originalPathKey, path)
			r.URL.Path, r.URL.RawPath = u.Path, u.RawPath
		} else {
			r.URL.RawPath = notFoundPath // a bad escape: only NodeHeads' absence lets one through
		}
		return next(c)
	}
}

// requestPath is the path as the client sent it: the request target up to
// its query (Express matches that), or the URL's escaped path for a request
// made in-process without one.
func requestPath(r *http.Request) string {
	p := r.RequestURI
	if p == "" || p[0] != '/' {
		return r.URL.EscapedPath()
	}
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

// canonical reports whether path, which matches segs, is spelt as Echo's
// router finds that route: literals in lower case, no trailing slash, and
// no parameter spelt "messages" (Echo would prefer the static segment of
// /api/v1/topics/messages/… where Express takes the earlier route).
func canonical(segs []string, path string) bool {
	if len(path) > 1 && path[len(path)-1] == '/' {
		return false
	}
	for _, lit := range segs {
		var seg string
		seg, path = cutSegment(path)
		if (lit != "" && seg != lit) || (lit == "" && seg == "messages") {
			return false
		}
	}
	return true
}

// canonicalPath is path, which matches segs, spelt as canonical requires: a
// parameter "messages" is written "%6Dessages", which Echo takes for a
// parameter and the handler decodes back.
func canonicalPath(segs []string, path string) string {
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	var b strings.Builder
	for _, lit := range segs {
		var seg string
		seg, path = cutSegment(path)
		b.WriteByte('/')
		switch {
		case lit != "":
			b.WriteString(lit)
		case seg == "messages":
			b.WriteString("%6Dessages")
		default:
			b.WriteString(seg)
		}
	}
	return b.String()
}

func originalPath(c echo.Context) string {
	if p, ok := c.Get(originalPathKey).(string); ok {
		return p
	}
	return requestPath(c.Request())
}

// pathParam is the URL-decoded parameter (Express decodes path parameters).
func pathParam(c echo.Context, name string) string {
	v := c.Param(name)
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

func query(c echo.Context) (*Query, error) {
	q, err := ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return nil, app.Invalid(err.Error())
	}
	return q, nil
}

const contentTypeJSON = nodehttp.ContentType

// sendNode writes a Node-service success body with its headers: cache
// control, the Link header for a next page, and Express's weak ETag with a
// 304 answer to a matching If-None-Match.
func sendNode(c echo.Context, body []byte, cacheControl string, next *string) error {
	hdr := c.Response().Header()
	hdr.Set("Cache-Control", cacheControl)
	if next != nil {
		hdr.Set("Link", "<"+*next+`>; rel="next"`)
	}
	tag := nodehttp.WeakETag(body)
	hdr.Set("ETag", tag)
	if inm := c.Request().Header.Get("If-None-Match"); inm != "" && nodehttp.ETagMatches(inm, tag) {
		return c.NoContent(http.StatusNotModified)
	}
	// Express sends the length; net/http would chunk a body past its
	// 2 KiB buffer instead (every list page), which costs both ends framing.
	// The gzip middleware drops it when it compresses.
	hdr.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, contentTypeJSON, body)
}
