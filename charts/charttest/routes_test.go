package charttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/service"
)

// A request path and where it belongs: route is the routes.* switch of a
// path mirrorql serves, "" for a path the mirror node keeps. kept marks a
// path mirrorql answers but leaves to the mirror node's own modules (health,
// metrics, the address book, reflection).
type pathCase struct {
	path  string
	route string
	kept  bool
}

const grpcPrefix = "/com.hedera.mirror.api.proto."

var pathTable = []pathCase{
	// mirrorql's REST routes, as Express matches them
	{"/api/v1/topics/7", "topic", false},
	{"/api/v1/topics/0.0.7", "topic", false},
	{"/api/v1/topics/1.2.3", "topic", false},
	{"/api/v1/topics/0.0.7/messages", "topicMessages", false},
	{"/api/v1/topics/7/messages/", "topicMessages", false},
	{"/API/V1/Topics/0.0.7/Messages", "topicMessages", false},
	{"/api/v1/topics/0.0.7/messages/3", "topicMessages", false},
	{"/api/v1/topics/0.0.7/messages/1234567890.000000001/", "topicMessages", false},
	{"/api/v1/topics/abc/messages", "topicMessages", false},
	{"/api/v1/topics/messages/1234567890.000000001", "messageByTimestamp", false},
	{"/api/v1/TOPICS/messages/1234567890.000000001/", "messageByTimestamp", false},
	{"/api/v1/schedules", "schedules", false},
	{"/api/v1/schedules/", "schedules", false},
	{"/Api/V1/Schedules", "schedules", false},
	{"/api/v1/schedules/0.0.1234", "schedules", false},
	{"/api/v1/schedules/1234/", "schedules", false},
	// the GraphQL face, its explorer, the dashboard, the docs
	{"/graphql", "graphql", false},
	{"/graphql/explorer/explorer.js", "explorer", false},
	{"/graphql/explorer/graphiql.min.css", "explorer", false},
	{"/graphql/explorer/", "", false},
	{"/graphql/explorer", "", false},
	{"/dashboard", "dashboard", false},
	{"/dashboard/", "dashboard", false},
	{"/dashboard/assets/dashboard.js", "dashboard", false},
	{"/dashboard/assets/", "", false},
	{"/dashboard/x", "", false},
	{"/Dashboard", "", false},
	{"/api/v1/docs", "docs", false},
	{"/api/v1/docs/", "docs", false},
	{"/api/v1/docs/openapi.yml", "docs", false},
	{"/api/v1/docs/assets/swagger-ui.css", "docs", false},
	{"/api/v1/docs/assets/", "", false},
	{"/api/v1/docs/openapi.yml/", "", false},
	{"/API/V1/DOCS", "", false},
	// the SDKs' gRPC
	{grpcPrefix + "ConsensusService/subscribeTopic", "consensus", false},
	{grpcPrefix + "NetworkService/getNodes", "", true},
	{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "", true},
	{"/grpc.health.v1.Health/Check", "", true},
	// topic paths the mirror node answers itself (rest-java takes only its
	// expression, Node has no route for the rest)
	{"/api/v1/topics", "", false},
	{"/api/v1/topics/", "", false},
	{"/api/v1/topics/0.0.7/", "", false},
	{"/api/v1/topics/abc", "", false},
	{"/API/V1/TOPICS/7", "", false},
	{"/api/v1/topics/0x00000000000000000000000000000000000004d2", "", false},
	{"/api/v1/topics/messages", "", false},
	// Express's parameters are never empty and never span a "/", so Node
	// answers these with its generic 404; mirrorql's router hands them to a
	// route with an empty parameter or the rest of the path as one (a 400).
	// The mirror node keeps them.
	{"/api/v1/topics/0.0.7/messages/3/x", "", true},
	{"/api/v1/schedules/0.0.1/x", "", true},
	{"/api/v1/topics//messages", "", true},
	{"/api/v1/topics/7/messages//", "", true},
	{"/api/v1/schedules//", "", true},
	{"/api/v1/topics/messages/", "", false},
	// the mirror node's other routes
	{"/api/v1/accounts", "", false},
	{"/api/v1/accounts/0.0.2", "", false},
	{"/api/v1/accounts/0.0.2/nfts", "", false},
	{"/api/v1/accounts/0.0.2/allowances/nfts", "", false},
	{"/api/v1/accounts/0.0.2/airdrops/pending", "", false},
	{"/api/v1/balances", "", false},
	{"/api/v1/blocks", "", false},
	{"/api/v1/blocks/123", "", false},
	{"/api/v1/contracts", "", false},
	{"/api/v1/contracts/call", "", false},
	{"/api/v1/contracts/0.0.1001/results", "", false},
	{"/api/v1/contracts/results/logs", "", false},
	{"/api/v1/network/exchangerate", "", false},
	{"/api/v1/network/nodes", "", false},
	{"/api/v1/network/supply", "", false},
	{"/api/v1/network/stake", "", false},
	{"/api/v1/tokens", "", false},
	{"/api/v1/tokens/0.0.1234/balances", "", false},
	{"/api/v1/tokens/0.0.1234/nfts/1", "", false},
	{"/api/v1/transactions", "", false},
	{"/api/v1/transactions/0.0.2-1234567890-000000001", "", false},
	{"/api/v1/transactions/0.0.2-1234567890-000000001/stateproof", "", false},
	{"/api/v1/schedules.json", "", false},
	{"/api/v2/schedules", "", false},
	{"/graphql/alpha", "", false},
	{"/graphql/", "", false},
	{"/graphqlx", "", false},
	{"/GRAPHQL", "", false},
	{"/dashboards", "", false},
	{"/api/v1/docsx", "", false},
	{"/", "", false},
	{"/health/liveness", "", true},
	{"/health/readiness", "", true},
	{"/metrics", "", true},
	{"/favicon.ico", "", true},
	{"/actuator/prometheus", "", false},
}

// destination is where a proxy sends a path: mirrorql's http or grpc port,
// or elsewhere ("").
type router func(path string) string

// traefikRouter is the Ingress as Traefik reads it with the PathRegexp path
// matcher: each path is a Go regular expression searched in the request path.
func traefikRouter(t *testing.T, ing *networkingv1.Ingress) router {
	t.Helper()
	if ing.Annotations["traefik.ingress.kubernetes.io/router.pathmatcher"] != "PathRegexp" {
		t.Fatalf("ingress %s: no PathRegexp path matcher: Traefik would read its paths as prefixes", ing.Name)
	}
	type rule struct {
		re   *regexp.Regexp
		port string
	}
	var rules []rule
	for _, r := range ing.Spec.Rules {
		for _, p := range r.HTTP.Paths {
			if p.PathType == nil || *p.PathType != networkingv1.PathTypeImplementationSpecific {
				t.Fatalf("ingress path %q: type %v, want ImplementationSpecific", p.Path, p.PathType)
			}
			if !strings.HasPrefix(p.Path, "/") {
				t.Fatalf("ingress path %q: Kubernetes wants an absolute path", p.Path)
			}
			rules = append(rules, rule{regexp.MustCompile(p.Path), p.Backend.Service.Port.Name})
		}
	}
	return func(path string) string {
		for _, r := range rules {
			if r.re.MatchString(path) {
				return r.port
			}
		}
		return ""
	}
}

// gatewayRouter is the HTTPRoutes and GRPCRoutes as the Gateway API defines
// their matches: Exact and PathPrefix (by whole segments) as the spec says,
// RegularExpression matched against the whole path as Envoy-based and GKE
// gateways do; a GRPCRoute method match on /service/method.
func gatewayRouter(t *testing.T, http []*gatewayv1.HTTPRoute, grpc []*gatewayv1.GRPCRoute) router {
	t.Helper()
	type rule struct {
		match func(string) bool
		port  string
	}
	var rules []rule
	for _, r := range http {
		for _, rr := range r.Spec.Rules {
			for _, m := range rr.Matches {
				v := *m.Path.Value
				var f func(string) bool
				switch *m.Path.Type {
				case gatewayv1.PathMatchExact:
					f = func(p string) bool { return p == v }
				case gatewayv1.PathMatchPathPrefix:
					pre := strings.TrimSuffix(v, "/")
					f = func(p string) bool { return p == pre || strings.HasPrefix(p, pre+"/") }
				case gatewayv1.PathMatchRegularExpression:
					re := regexp.MustCompile(`^(?:` + v + `)$`)
					f = re.MatchString
				}
				rules = append(rules, rule{f, portName(t, rr.BackendRefs[0].Port)})
			}
		}
	}
	for _, r := range grpc {
		for _, rr := range r.Spec.Rules {
			for _, m := range rr.Matches {
				if m.Method.Type == nil || *m.Method.Type != gatewayv1.GRPCMethodMatchExact {
					t.Fatalf("GRPCRoute %s: method match %v, want Exact", r.Name, m.Method.Type)
				}
				want := "/" + *m.Method.Service + "/" + *m.Method.Method
				rules = append(rules, rule{func(p string) bool { return p == want }, portName(t, rr.BackendRefs[0].Port)})
			}
		}
	}
	return func(path string) string {
		for _, r := range rules {
			if r.match(path) {
				return r.port
			}
		}
		return ""
	}
}

// portName names the Service port a backendRef's number points at.
func portName(t *testing.T, p *gatewayv1.PortNumber) string {
	switch *p {
	case 80:
		return "http"
	case 5600:
		return "grpc"
	}
	t.Fatalf("backend port %d is neither of the Service's", *p)
	return ""
}

// wantPort is the port a path mirrorql takes goes to.
func wantPort(path string) string {
	if strings.HasPrefix(path, grpcPrefix) {
		return "grpc"
	}
	return "http"
}

// routers renders values and returns the Ingress and the Gateway API routes
// as routers (nil when the values render none).
func routers(t *testing.T, values map[string]any) map[string]router {
	t.Helper()
	out := map[string]router{}
	objs := render(t, values)
	for _, o := range find(objs, "Ingress") {
		out["traefik ingress"] = traefikRouter(t, typed(t, o).(*networkingv1.Ingress))
	}
	var hr []*gatewayv1.HTTPRoute
	var gr []*gatewayv1.GRPCRoute
	for _, o := range find(objs, "HTTPRoute") {
		hr = append(hr, typed(t, o).(*gatewayv1.HTTPRoute))
	}
	for _, o := range find(objs, "GRPCRoute") {
		gr = append(gr, typed(t, o).(*gatewayv1.GRPCRoute))
	}
	if len(hr) > 0 || len(gr) > 0 {
		out["gateway api"] = gatewayRouter(t, hr, gr)
	}
	return out
}

// Every path of the table goes where it belongs, through the Ingress and
// through the Gateway API routes, for each value set.
func TestRouteTable(t *testing.T) {
	for set, file := range valueSets {
		t.Run(set, func(t *testing.T) {
			rs := routers(t, readValues(t, file))
			if set == "mirror-node" && len(rs) != 2 {
				t.Fatalf("routers %v, want the Ingress and the Gateway API routes", rs)
			}
			for name, r := range rs {
				for _, c := range pathTable {
					want := ""
					if c.route != "" {
						want = wantPort(c.path)
					}
					if got := r(c.path); got != want {
						t.Errorf("%s: %s goes to %q, want %q", name, c.path, got, want)
					}
				}
			}
		})
	}
}

// Each routes.* switch takes its paths away and leaves every other path
// where it was.
func TestRouteSwitches(t *testing.T) {
	switches := map[string]bool{}
	for _, c := range pathTable {
		if c.route != "" {
			switches[c.route] = true
		}
	}
	base := readValues(t, valueSets["mirror-node"])
	for sw := range switches {
		t.Run(sw, func(t *testing.T) {
			values := readValues(t, valueSets["mirror-node"])
			values["routes"] = map[string]any{sw: false}
			_ = base
			for name, r := range routers(t, values) {
				for _, c := range pathTable {
					want := ""
					if c.route != "" && c.route != sw {
						want = wantPort(c.path)
					}
					if got := r(c.path); got != want {
						t.Errorf("%s with routes.%s=false: %s goes to %q, want %q", name, sw, c.path, got, want)
					}
				}
			}
		})
	}
}

var (
	serviceOnce sync.Once
	serviceE    http.Handler
	serviceErr  error
)

// mirrorqlRouter is the service's main listener's handler, every route and
// middleware and the gRPC face as `mirrorql serve` builds them, over a database nobody
// answers: a route that exists fails with 503 (or answers without the
// database), a path no route takes gets the mirror node's generic 404.
func mirrorqlRouter(t *testing.T) http.Handler {
	t.Helper()
	serviceOnce.Do(func() {
		cfg := config.Defaults()
		cfg.CacheEnabled = false
		cfg.DatabaseURL = "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
		d, err := db.Open(db.Options{URL: cfg.DatabaseURL, PoolSize: 1, StatementTimeout: time.Second, ConnectTimeout: time.Second})
		if err != nil {
			serviceErr = err
			return
		}
		log := slog.New(slog.DiscardHandler)
		ops, err := service.NewOperations(context.Background(), cfg, d, log)
		if err != nil {
			serviceErr = err
			return
		}
		e := service.New(cfg, d, log, ops, []byte("openapi: 3.0.3\n"))
		serviceE = service.WithConsensus(e, service.Consensus(cfg, d, log, ops))
	})
	if serviceErr != nil {
		t.Fatal(serviceErr)
	}
	return serviceE
}

// notFound is the mirror node's answer to a path no route takes.
const notFound = `{"_status":{"messages":[{"message":"Not found"}]}}`

// The table agrees with mirrorql's router: it serves each path the table
// gives it, and answers the mirror node's generic 404 to every other path,
// except those the table says it answers but leaves to the mirror node.
func TestRouteTableAgreesWithService(t *testing.T) {
	e := mirrorqlRouter(t)
	for _, c := range pathTable {
		if strings.HasPrefix(c.path, grpcPrefix) || strings.HasPrefix(c.path, "/grpc.") {
			continue // the gRPC face is another handler: TestGRPCMethodsServed
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		body, _ := io.ReadAll(rec.Body)
		served := !(rec.Code == http.StatusNotFound && strings.TrimSpace(string(body)) == notFound)
		if want := c.route != "" || c.kept; served != want {
			t.Errorf("GET %s: %d %.80s; served %v, the table says %v", c.path, rec.Code, body, served, want)
		}
	}
}

// The gRPC methods the routes claim are those mirrorql implements, and the
// table's other gRPC paths are not claimed: a method the face lacks answers
// UNIMPLEMENTED (grpc-status 12).
func TestGRPCMethodsServed(t *testing.T) {
	srv := httptest.NewServer(mirrorqlRouter(t))
	defer srv.Close()
	for _, c := range pathTable {
		if !strings.HasPrefix(c.path, grpcPrefix) {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader("\x00\x00\x00\x00\x00"))
		req.Header.Set("Content-Type", "application/grpc-web+proto")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status := resp.Header.Get("Grpc-Status")
		if status == "" {
			status = grpcWebTrailerStatus(b)
		}
		implemented := status != "12"
		if want := c.route != ""; implemented != want {
			t.Errorf("%s: grpc-status %s; implemented %v, the table claims %v", c.path, status, implemented, want)
		}
	}
}

func grpcWebTrailerStatus(b []byte) string {
	m := regexp.MustCompile(`grpc-status: ?(\d+)`).FindSubmatch(b)
	if m == nil {
		return fmt.Sprintf("none in %q", b)
	}
	return string(m[1])
}
