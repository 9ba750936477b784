package rest

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestRoutesOrder: the table holds the ingress rule, then the Node module's
// routes in rest/server.js's order (schedules are registered before topics).
func TestRoutesOrder(t *testing.T) {
	var got []string
	for _, r := range Routes() {
		got = append(got, r.Service+" "+r.Path)
	}
	want := []string{
		"rest-java /api/v1/topics/:id",
		"rest /api/v1/schedules",
		"rest /api/v1/schedules/:scheduleId",
		"rest /api/v1/topics/:topicId/messages",
		"rest /api/v1/topics/:topicId/messages/:sequenceNumber",
		"rest /api/v1/topics/messages/:timestamp",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := CachedRoutes(); len(c) != 1 || c[RouteSchedules] != VersionSchedules {
		t.Errorf("CachedRoutes() = %q", c)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		path string
		want string // route name, "" for none
	}{
		{"/api/v1/schedules", "schedules"},
		{"/api/v1/schedules/", "schedules"},
		{"/API/V1/Schedules/", "schedules"},
		{"/api/v1/schedules//", ""},
		{"/api/v1/schedules/0.0.100", "schedule"},
		{"/api/v1/schedules/0.0.100/", "schedule"},
		{"/api/v1/schedules/0.0.100/x", ""},
		{"/api/v1/schedules/%2F", "schedule"},
		{"/api/v1/topics/7/messages", "topicMessages"},
		{"/api/v1/topics/7/messages/", "topicMessages"},
		{"/api/v1/topics//messages", ""},
		{"/api/v1/topics/7/messages//", ""},
		{"/api/v1/topics/7/messages/3", "topicMessage"},
		{"/api/v1/topics/7/messages/./", "topicMessage"},
		{"/api/v1/topics/7/messages/3/x", ""},
		{"/api/v1/topics/7/messages/3//", ""},
		{"/api/v1/topics/messages/1.2", "messageByTimestamp"},
		// order wins: a topic id spelt "messages" is the earlier route's
		{"/api/v1/topics/messages/messages", "topicMessages"},
		{"/api/v1/topics/messages/messages/1", "topicMessage"},
		{"/api/v1/topics/messages", ""},
		{"/api/v1/topics/messages/", ""},
		// the ingress rule: exact spelling, digits and up to two dots
		{"/api/v1/topics/7", "topic"},
		{"/api/v1/topics/0.0.7", "topic"},
		{"/api/v1/topics/0.0.0.7", ""},
		{"/api/v1/topics/7/", ""},
		{"/API/V1/TOPICS/7", ""},
		{"/api/v1/topics/.7", ""},
		{"/api/v1/topics/7.", ""},
		// literal segments are compared as sent, ASCII case only
		{"/api/v1/%74opics/7/messages", ""},
		{"/api/v1/\u017fchedules", ""},
		{"/api/v1/schedules%zz", ""},
		{"//api/v1/schedules", ""},
		{"/api/v1//schedules", ""},
		{"", ""},
		{"/", ""},
	}
	for _, tc := range tests {
		got := ""
		if r, ok := Match(tc.path); ok {
			got = r.Name
		}
		if got != tc.want {
			t.Errorf("Match(%q) = %q, want %q", tc.path, got, tc.want)
		}
		if oracle := matchByRegexp(tc.path); oracle != tc.want {
			t.Errorf("the regexp model says %q for %q, the table %q", oracle, tc.path, tc.want)
		}
	}
}

// routeRegexps are the routes as path-to-regexp compiles an Express route
// with the router's defaults (not strict, not case-sensitive): each
// parameter one or more characters other than '/', an optional trailing
// slash. Letters are spelt as classes so that only ASCII case folds.
var routeRegexps = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, r := range routes[1:] {
		var b strings.Builder
		b.WriteString("^")
		for _, seg := range strings.Split(strings.TrimPrefix(r.Path, "/"), "/") {
			b.WriteString("/")
			if strings.HasPrefix(seg, ":") {
				b.WriteString("[^/]+")
				continue
			}
			for _, c := range seg {
				if c >= 'a' && c <= 'z' {
					b.WriteString("[" + string(c) + strings.ToUpper(string(c)) + "]")
				} else {
					b.WriteString(regexp.QuoteMeta(string(c)))
				}
			}
		}
		b.WriteString("/?$")
		out = append(out, regexp.MustCompile(b.String()))
	}
	return out
}()

var javaRegexp = regexp.MustCompile(`^/api/v1/topics/(\d+\.){0,2}\d+$`)

// matchByRegexp is the model Match is checked against.
func matchByRegexp(path string) string {
	if javaRegexp.MatchString(path) {
		return "topic"
	}
	for i, re := range routeRegexps {
		if re.MatchString(path) {
			return routes[i+1].Name
		}
	}
	return ""
}

func FuzzMatch(f *testing.F) {
	for _, s := range []string{"/api/v1/topics/7/messages/", "/API/v1/schedules/x/", "/api/v1/topics/messages/messages", "/api/v1/topics/0.0.7", "/api/v1/topics//messages"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := ""
		if r, ok := Match(path); ok {
			got = r.Name
			if !canonical(r.segments, canonicalPath(r.segments, path)) {
				t.Errorf("canonicalPath(%q) = %q is not canonical", path, canonicalPath(r.segments, path))
			}
		}
		if want := matchByRegexp(path); got != want {
			t.Errorf("Match(%q) = %q, the regexp model %q", path, got, want)
		}
	})
}

// TestCanonicalRouteReachesTheMatchedRoute: Echo, behind CanonicalRoute,
// runs the handler the table chose, with the parameters as spelt.
func TestCanonicalRouteReachesTheMatchedRoute(t *testing.T) {
	e := echo.New()
	e.Pre(CanonicalRoute)
	for _, r := range routes {
		e.Any(r.Path, func(c echo.Context) error {
			return c.String(http.StatusOK, c.Path()+" "+strings.Join(c.ParamValues(), ",")+" "+originalPath(c))
		})
	}
	tests := []struct{ target, want string }{
		{"/api/v1/topics/messages/messages", RouteTopicMessages + " %6Dessages /api/v1/topics/messages/messages"},
		{"/api/v1/topics/messages/messages/2", RouteTopicMessage + " %6Dessages,2 /api/v1/topics/messages/messages/2"},
		{"/api/v1/topics/messages/5", RouteMessageByTimestamp + " 5 /api/v1/topics/messages/5"},
		{"/API/v1/Topics/7/MESSAGES/?limit=1", RouteTopicMessages + " 7 /API/v1/Topics/7/MESSAGES/"},
		{"/api/v1/topics/7%2F1/messages", RouteTopicMessages + " 7%2F1 /api/v1/topics/7%2F1/messages"},
		{"/api/v1/schedules/1", RouteSchedule + " 1 /api/v1/schedules/1"},
		{"/api/v1/topics/7", RouteTopic + " 7 /api/v1/topics/7"},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.target, rec.Code, rec.Body.String(), tc.want)
		}
	}
	for _, target := range []string{"/api/v1/topics/7/messages/1/x", "/api/v1/schedules//", "/api/v1/topics/7/", "/api/v1/topics/messages"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d %q, want 404", target, rec.Code, rec.Body.String())
		}
	}
}

// TestCanonicalRouteAllocatesNothing: an ordinary path costs the routing no
// allocation.
func TestCanonicalRouteAllocatesNothing(t *testing.T) {
	e := echo.New()
	h := CanonicalRoute(func(echo.Context) error { return nil })
	for _, target := range []string{"/api/v1/topics/7/messages?limit=2", "/api/v1/topics/7/messages/3", "/api/v1/schedules/0.0.100", "/api/v1/topics/0.0.7", "/graphql", "/api/v1/topics/7/messages/1/x"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		c := e.NewContext(req, httptest.NewRecorder())
		if n := testing.AllocsPerRun(100, func() { _ = h(c) }); n != 0 {
			t.Errorf("%s: %v allocations", target, n)
		}
	}
}

func BenchmarkCanonicalRoute(b *testing.B) {
	e := echo.New()
	h := CanonicalRoute(func(echo.Context) error { return nil })
	for _, target := range []string{"/api/v1/topics/7/messages?limit=2", "/api/v1/topics/messages/1234567890.000000001", "/api/v1/schedules/0.0.100"} {
		b.Run(target, func(b *testing.B) {
			c := e.NewContext(httptest.NewRequest(http.MethodGet, target, nil), httptest.NewRecorder())
			b.ReportAllocs()
			for b.Loop() {
				_ = h(c)
			}
		})
	}
}

// BenchmarkServeREST is a request through Echo, CanonicalRoute and the
// handler over the in-memory core: the routing's share of a whole request
// (compare with the build before: -benchmem).
func BenchmarkServeREST(b *testing.B) {
	e := serve(testLedger(false))
	for _, target := range []string{"/api/v1/topics/7/messages/2", "/api/v1/topics/7/messages?limit=2", "/api/v1/topics/messages/1234567890.000000001", "/api/v1/schedules/0.0.9"} {
		b.Run(target, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
