// Package rest is the REST face: Echo handlers that reproduce the mirror node
// REST API (docs/reference/behavior.md) over the shared query layer.
package rest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"mirrorql/app"
	"mirrorql/etag"
	"mirrorql/nodejson"
)

// Route templates as Echo sees them after canonicalRoute.
const (
	RouteTopicMessages      = "/api/v1/topics/:topicId/messages"
	RouteTopicMessage       = "/api/v1/topics/:topicId/messages/:sequenceNumber"
	RouteMessageByTimestamp = "/api/v1/topics/messages/:timestamp"
	RouteTopic              = "/api/v1/topics/:id"
	RouteSchedules          = "/api/v1/schedules"
	RouteSchedule           = "/api/v1/schedules/:scheduleId"
)

// nodeRoutes are the Node service's routes in registration order, as
// segments: Express matches them case-insensitively, tolerates one trailing
// slash and takes the first that fits ("" is a parameter segment).
var nodeRoutes = routeSegments(RouteTopicMessages, RouteTopicMessage, RouteMessageByTimestamp, RouteSchedules, RouteSchedule)

func routeSegments(routes ...string) [][]string {
	out := make([][]string, len(routes))
	for i, r := range routes {
		out[i] = strings.Split(strings.TrimPrefix(r, "/"), "/")
		for j, seg := range out[i] {
			if strings.HasPrefix(seg, ":") {
				out[i][j] = ""
			}
		}
	}
	return out
}

const originalPathKey = "mirrorql.originalPath"

// Register mounts the routes on e. Call Pre(e) first so the Express-style
// matching applies.
func (h *Handlers) Register(e *echo.Echo) {
	get := []string{http.MethodGet, http.MethodHead}
	e.Match(get, RouteTopicMessages, h.topicMessages)
	e.Match(get, RouteTopicMessage, h.topicMessage)
	e.Match(get, RouteMessageByTimestamp, h.messageByTimestamp)
	e.Match(get, RouteSchedules, h.schedules)
	e.Match(get, RouteSchedule, h.schedule)
	e.Any(RouteTopic, h.topic)
}

// CanonicalRoute is an Echo Pre middleware: it rewrites a path that one of
// the Node routes matches case-insensitively, with or without one trailing
// slash, to that route's lower-case form, remembering the path as the
// client wrote it (links repeat it). Parameter segments are left untouched.
func CanonicalRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		original := r.URL.EscapedPath()
		if len(original) < 8 || !strings.EqualFold(original[:8], "/api/v1/") {
			return next(c)
		}
		path := original
		if len(path) > 1 && strings.HasSuffix(path, "/") {
			path = path[:len(path)-1]
		}
		segments := strings.Split(path[1:], "/")
		for _, route := range nodeRoutes {
			if !matches(route, segments) {
				continue
			}
			for i, lit := range route {
				if lit != "" {
					segments[i] = lit
				}
			}
			rewritten := "/" + strings.Join(segments, "/")
			if rewritten != original {
				if u, err := url.Parse(rewritten); err == nil {
					// Only a rewritten path needs remembering (originalPath):
					// Echo's context store is a map made on first use.
					c.Set(originalPathKey, original)
					r.URL.Path, r.URL.RawPath = u.Path, u.RawPath
				}
			}
			break
		}
		return next(c)
	}
}

func matches(route, segments []string) bool {
	if len(route) != len(segments) {
		return false
	}
	for i, lit := range route {
		if segments[i] == "" || (lit != "" && !strings.EqualFold(lit, segments[i])) {
			return false
		}
	}
	return true
}

func originalPath(c echo.Context) string {
	if p, ok := c.Get(originalPathKey).(string); ok {
		return p
	}
	return c.Request().URL.EscapedPath()
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

const contentTypeJSON = nodejson.ContentType

// sendNode writes a Node-service success body with its headers: cache
// control, the Link header for a next page, and Express's weak ETag with a
// 304 answer to a matching If-None-Match.
func sendNode(c echo.Context, body []byte, cacheControl string, next *string) error {
	hdr := c.Response().Header()
	hdr.Set("Cache-Control", cacheControl)
	if next != nil {
		hdr.Set("Link", "<"+*next+`>; rel="next"`)
	}
	tag := etag.Weak(body)
	hdr.Set("ETag", tag)
	if inm := c.Request().Header.Get("If-None-Match"); inm != "" && etag.Matches(inm, tag) {
		return c.NoContent(http.StatusNotModified)
	}
	// Express sends the length; net/http would chunk a body past its
	// 2 KiB buffer instead (every list page), which costs both ends framing.
	// The gzip middleware drops it when it compresses.
	hdr.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, contentTypeJSON, body)
}
