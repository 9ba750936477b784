package charttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	muxhttp "github.com/traefik/traefik/v3/pkg/muxer/http"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/service"
)

// A request path and where it belongs. route is the routes.* switch under
// which mirrorql takes the path with the default values, "" for a path it
// leaves alone. mirror is the mirror node's module that takes the path when
// mirrorql does not (its Ingresses with values-prod, testdata), "" for none
// (Traefik's own 404). kept marks a path mirrorql's handler answers although
// its routes leave it to the mirror node (health, metrics, the address
// book, reflection, its docs at the mirror node's docs path).
//
// Paths are as a client sends them: Traefik sanitizes them first ("//",
// "/./", "/../" removed), so /api/v1/schedules// reaches mirrorql as
// /api/v1/schedules/ — the list, which the mirror node answers there too.
// The table is the one place that says who owns a path: a route table of
// the mirror node's own (Express's) can be checked against it row by row.
type pathCase struct {
	path   string
	route  string
	mirror string
	kept   bool
}

const grpcPrefix = "/com.hedera.mirror.api.proto."

// The mirror node's modules, as their Services are named without the release.
const (
	rest     = "rest"
	restjava = "restjava"
	web3     = "web3"
	grpcMod  = "grpc"
	monitor  = "monitor"
)

var pathTable = []pathCase{
	// mirrorql's REST routes, as Express matches them
	{"/api/v1/topics/7", "topic", restjava, false},
	{"/api/v1/topics/0.0.7", "topic", restjava, false},
	{"/api/v1/topics/1.2.3", "topic", restjava, false},
	{"/api/v1/topics/0.0.7/messages", "topicMessages", rest, false},
	{"/api/v1/topics/7/messages/", "topicMessages", rest, false},
	{"/API/V1/Topics/0.0.7/Messages", "topicMessages", "", false},
	{"/api/v1/topics/0.0.7/messages/3", "topicMessages", rest, false},
	{"/api/v1/topics/0.0.7/messages/1234567890.000000001/", "topicMessages", rest, false},
	{"/api/v1/topics/abc/messages", "topicMessages", rest, false},
	{"/api/v1/topics/messages/1234567890.000000001", "messageByTimestamp", rest, false},
	{"/api/v1/TOPICS/messages/1234567890.000000001/", "messageByTimestamp", rest, false},
	{"/api/v1/schedules", "schedules", rest, false},
	{"/api/v1/schedules/", "schedules", rest, false},
	{"/Api/V1/Schedules", "schedules", "", false},
	{"/API/V1/SCHEDULES/0.0.1", "schedules", "", false},
	{"/api/v1/schedules/0.0.1234", "schedules", rest, false},
	{"/api/v1/schedules/1234/", "schedules", rest, false},
	{"/api/v1/schedules?limit=2&order=desc", "schedules", rest, false},
	// the GraphQL face, its explorer, the dashboard
	{"/graphql", "graphql", "", false},
	{"/graphql/explorer/explorer.js", "explorer", "", false},
	{"/graphql/explorer/graphiql.min.css", "explorer", "", false},
	{"/graphql/explorer/", "", "", false},
	{"/graphql/explorer", "", "", false},
	{"/dashboard", "dashboard", "", false},
	{"/dashboard/", "dashboard", "", false},
	{"/dashboard/assets/dashboard.js", "dashboard", "", false},
	{"/dashboard/assets/", "", "", false},
	{"/dashboard/x", "", "", false},
	{"/Dashboard", "", "", false},
	// the docs: /api/v1/docs* is the mirror node's (docs.besideMirrorNode),
	// mirrorql's OpenAPI document is at docs.path
	{"/mirrorql/openapi.yml", "docs", "", false},
	{"/mirrorql/openapi.yml/", "", "", false},
	{"/mirrorql", "", "", false},
	{"/api/v1/docs", "", rest, true},
	{"/api/v1/docs/", "", rest, true},
	{"/api/v1/docs/openapi.yml", "", rest, true},
	{"/api/v1/docs/assets/swagger-ui.css", "", rest, true},
	{"/api/v1/docs/assets/", "", rest, false},
	{"/api/v1/docs/openapi.yml/", "", rest, false},
	{"/API/V1/DOCS", "", "", false},
	// the SDKs' gRPC
	{grpcPrefix + "ConsensusService/subscribeTopic", "consensus", grpcMod, false},
	{grpcPrefix + "NetworkService/getNodes", "", grpcMod, true},
	{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "", grpcMod, true},
	{"/grpc.health.v1.Health/Check", "", "", true},
	// topic paths the mirror node answers itself (rest-java takes only its
	// expression, Node has no route for the rest)
	{"/api/v1/topics", "", rest, false},
	{"/api/v1/topics/", "", rest, false},
	{"/api/v1/topics/0.0.7/", "", rest, false},
	{"/api/v1/topics/abc", "", rest, false},
	{"/API/V1/TOPICS/7", "", "", false},
	{"/api/v1/topics/0x00000000000000000000000000000000000004d2", "", rest, false},
	{"/api/v1/topics/messages", "", rest, false},
	{"/api/v1/topics/messages/", "", rest, false},
	// Express's parameters are never empty and never span a "/", so Node
	// answers these with its generic 404, and so does mirrorql's router
	// (rest.Match). The mirror node keeps them.
	{"/api/v1/topics/0.0.7/messages/3/x", "", rest, false},
	{"/api/v1/schedules/0.0.1/x", "", rest, false},
	// paths Traefik sanitizes before routing: who takes them is who takes
	// the sanitized path
	{"/api/v1/topics//messages", "", rest, false},
	{"/api/v1/topics/7/messages//", "topicMessages", rest, false},
	{"/api/v1/schedules//", "schedules", rest, false},
	{"//api/v1/schedules", "schedules", rest, false},
	{"/api/v1/schedules/./1234", "schedules", rest, false},
	{"/api/v1/schedules/../accounts", "", rest, false},
	{"/api/v1/topics/7/messages/../../../schedules", "schedules", rest, false},
	{"/graphql/../graphql", "graphql", "", false},
	// nested, prefixed and doubled paths: anchored, mirrorql's expressions
	// take none of them
	{"/api/v1/accounts/0.0.2/graphql", "", rest, false},
	{"/api/v1/tokens/0.0.1/dashboard", "", rest, false},
	{"/api/v1/transactions/api/v1/schedules", "", rest, false},
	{"/api/v1/accounts/api/v1/topics/0.0.1/messages", "", rest, false},
	{"/api/v1/schedules/api/v1/schedules", "", rest, false},
	{"/api/v1/topics/7/api/v1/topics/7", "", restjava, false},
	{"/foo/api/v1/schedules", "", "", false},
	{"/foo/api/v1/topics/7", "", restjava, false}, // rest-java's expression is not anchored at the start
	{"/rosetta/graphql", "", "", false},
	{"/api/v1/graphql", "", rest, false},
	{"/dashboard/graphql", "", "", false},
	{"/x" + grpcPrefix + "ConsensusService/subscribeTopic", "", "", false},
	{grpcPrefix + "ConsensusService/subscribeTopicX", "", grpcMod, false},
	// the mirror node's other routes
	{"/api/v1/accounts", "", rest, false},
	{"/api/v1/accounts/0.0.2", "", rest, false},
	{"/api/v1/accounts/0.0.2/nfts", "", rest, false},
	{"/api/v1/accounts/0.0.2/allowances/nfts", "", restjava, false},
	{"/api/v1/accounts/0.0.2/airdrops/pending", "", restjava, false},
	{"/api/v1/balances", "", rest, false},
	{"/api/v1/blocks", "", rest, false},
	{"/api/v1/blocks/123", "", rest, false},
	{"/api/v1/contracts", "", rest, false},
	{"/api/v1/contracts/call", "", web3, false},
	{"/api/v1/contracts/0.0.1001/results", "", rest, false},
	{"/api/v1/contracts/results/logs", "", rest, false},
	{"/api/v1/network/exchangerate", "", restjava, false},
	{"/api/v1/network/nodes", "", restjava, false},
	{"/api/v1/network/supply", "", restjava, false},
	{"/api/v1/network/stake", "", restjava, false},
	{"/api/v1/tokens", "", rest, false},
	{"/api/v1/tokens/0.0.1234/balances", "", rest, false},
	{"/api/v1/tokens/0.0.1234/nfts/1", "", rest, false},
	{"/api/v1/transactions", "", rest, false},
	{"/api/v1/transactions/0.0.2-1234567890-000000001", "", rest, false},
	{"/api/v1/transactions/0.0.2-1234567890-000000001/stateproof", "", rest, false},
	{"/api/v1/schedules.json", "", rest, false},
	{"/api/v2/schedules", "", "", false},
	{"/graphql/alpha", "", "", false},
	{"/graphql/", "", "", false},
	{"/graphqlx", "", "", false},
	{"/GRAPHQL", "", "", false},
	{"/dashboards", "", "", false},
	{"/api/v1/docsx", "", rest, false},
	{"/", "", "", false},
	{"/health/liveness", "", "", true},
	{"/health/readiness", "", "", true},
	{"/metrics", "", "", true},
	{"/favicon.ico", "", "", true},
	{"/actuator/prometheus", "", "", false},
	{"/actuator/health/cluster", "", monitor, false},
}

// wantPort is the port a path mirrorql takes goes to.
func wantPort(path string) string {
	if strings.HasPrefix(path, grpcPrefix) {
		return "grpc"
	}
	return "http"
}

// sanitized is the path as Traefik routes it (sanitizePath), without the
// query.
func sanitized(t *testing.T, target string) string {
	t.Helper()
	u, err := url.ParseRequestURI(target)
	if err != nil {
		t.Fatal(err)
	}
	return sanitizePath(u).Path
}

// destination is where a proxy sends a path: mirrorql's http or grpc port,
// or elsewhere ("").
type router func(path string) string

// gatewayRouter is the HTTPRoutes and GRPCRoutes as the Gateway API defines
// their matches: Exact and PathPrefix (by whole segments) as the spec says,
// RegularExpression matched against the whole path as Envoy-based and GKE
// gateways do; a GRPCRoute method match on /service/method. It reads the
// path as Traefik's sanitizing leaves it: how far a Gateway implementation
// normalizes a path is its own.
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
					if !strings.HasPrefix(v, "^") || !strings.HasSuffix(v, "$") {
						t.Fatalf("HTTPRoute %s: expression %s is not anchored", r.Name, v)
					}
					f = regexp.MustCompile(v).MatchString
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
		path = sanitized(t, path)
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

// routers renders values and returns mirrorql's IngressRoute through
// Traefik's muxer and the Gateway API routes as routers (absent when the
// values render none).
func routers(t *testing.T, values map[string]any) map[string]router {
	t.Helper()
	out := map[string]router{}
	if routes := mirrorqlTraefikRoutes(t, values); len(routes) > 0 {
		proxy := newTraefikProxy(t, routes)
		host := "mirror.example.com"
		if g, ok := values["global"].(map[string]any); ok && g["hostname"] != nil && g["hostname"] != "" {
			host = g["hostname"].(string)
		}
		out["traefik"] = func(path string) string {
			owner, _ := proxy.route(t, host, path)
			return strings.TrimPrefix(owner, "mirrorql:")
		}
	}
	objs := render(t, values)
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

// Every path of the table goes where it belongs, through Traefik and
// through the Gateway API routes, for each value set: mirrorql alone.
func TestRouteTable(t *testing.T) {
	for set, file := range valueSets {
		t.Run(set, func(t *testing.T) {
			rs := routers(t, readValues(t, file))
			if set == "mirror-node" && len(rs) != 2 {
				t.Fatalf("routers %v, want Traefik's and the Gateway API routes", rs)
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

// The hostname cases of an install beside the mirror node: its Ingresses
// and mirrorql's with no host, a host on the mirror node's only, the same
// host on both.
var hostCases = []struct {
	name           string
	mirror, ours   string
	requestHost    string
	mirrorqlValues map[string]any
}{
	{"no hostnames", "", "", "mirror.example.com", nil},
	{"a host on the mirror node's only", "mainnet.mirrornode.example.com", "", "mainnet.mirrornode.example.com", nil},
	{"the same host on both", "mainnet.mirrornode.example.com", "mainnet.mirrornode.example.com", "mainnet.mirrornode.example.com", nil},
}

// Beside the mirror node, through Traefik's own rule parser, muxer and
// priorities: mirrorql takes exactly its paths and the mirror node's
// modules every other, for each hostname case.
func TestTraefikBesideMirrorNode(t *testing.T) {
	for _, hc := range hostCases {
		t.Run(hc.name, func(t *testing.T) {
			values := readValues(t, valueSets["mirror-node"])
			values["global"].(map[string]any)["hostname"] = hc.ours
			var routes []traefikRoute
			for _, ing := range mirrorNodeIngresses(t, hc.mirror) {
				routes = append(routes, ingressRoutes(t, ing)...)
			}
			routes = append(routes, mirrorqlTraefikRoutes(t, values)...)
			proxy := newTraefikProxy(t, routes)
			for _, c := range pathTable {
				want := c.mirror
				if c.route != "" {
					want = "mirrorql:" + wantPort(c.path)
				}
				owner, got := proxy.route(t, hc.requestHost, c.path)
				if owner != want {
					t.Errorf("%s goes to %q, want %q", c.path, owner, want)
					continue
				}
				// What reaches mirrorql: the sanitized path, or the
				// service's own path for the docs.
				if strings.HasPrefix(owner, "mirrorql:") {
					wantPath := sanitized(t, c.path)
					if c.route == "docs" {
						wantPath = "/api/v1/docs/openapi.yml"
					}
					if got != wantPath {
						t.Errorf("%s reaches mirrorql as %s, want %s", c.path, got, wantPath)
					}
				}
			}
		})
	}
}

// Under every host, Traefik ranks mirrorql's routes above each rule of the
// mirror node's: the priority exceeds the length of the longest of them
// with the longest hostname DNS allows.
func TestTraefikPriorityAboveMirrorNode(t *testing.T) {
	longHost := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("a", 61) // 253 characters
	longest := 0
	for _, ing := range mirrorNodeIngresses(t, longHost) {
		for _, r := range ingressRoutes(t, ing) {
			if r.priority != 0 {
				t.Errorf("the mirror node's rule %s has priority %d: the test assumes rule length", r.rule, r.priority)
			}
			longest = max(longest, muxhttp.GetRulePriority(r.rule))
		}
	}
	routes := mirrorqlTraefikRoutes(t, readValues(t, valueSets["mirror-node"]))
	if len(routes) == 0 {
		t.Fatal("no IngressRoute rendered")
	}
	for _, r := range routes {
		if r.priority <= longest {
			t.Errorf("%s: priority %d, not above the mirror node's longest rule (%d)", r.rule, r.priority, longest)
		}
		if !strings.Contains(r.rule, "PathRegexp(`^") || !strings.HasSuffix(r.rule, "$`)") {
			t.Errorf("%s: not an anchored expression", r.rule)
		}
	}
}

// Alone (docs.besideMirrorNode false), mirrorql's routes claim its docs at
// /api/v1/docs and publish nothing at docs.path.
func TestDocsAlone(t *testing.T) {
	values := readValues(t, valueSets["mirror-node"])
	values["docs"] = map[string]any{"besideMirrorNode": false}
	want := map[string]string{
		"/api/v1/docs":                       "http",
		"/api/v1/docs/":                      "http",
		"/api/v1/docs/openapi.yml":           "http",
		"/api/v1/docs/assets/swagger-ui.css": "http",
		"/api/v1/docs/assets/":               "",
		"/api/v1/docs/openapi.yml/":          "",
		"/API/V1/DOCS":                       "",
		"/mirrorql/openapi.yml":              "",
	}
	for name, r := range routers(t, values) {
		for path, w := range want {
			if got := r(path); got != w {
				t.Errorf("%s: %s goes to %q, want %q", name, path, got, w)
			}
		}
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
	for sw := range switches {
		t.Run(sw, func(t *testing.T) {
			values := readValues(t, valueSets["mirror-node"])
			values["routes"] = map[string]any{sw: false}
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
// gives it (as Traefik hands it on), and answers the mirror node's generic 404 to every other path,
// except those the table says it answers but leaves to the mirror node.
func TestRouteTableAgreesWithService(t *testing.T) {
	e := mirrorqlRouter(t)
	for _, c := range pathTable {
		if strings.HasPrefix(c.path, grpcPrefix) || strings.HasPrefix(c.path, "/grpc.") {
			continue // the gRPC face is another handler: TestGRPCMethodsServed
		}
		// The path as Traefik hands it on: sanitized, and the docs
		// rewritten to the service's own path.
		path := sanitized(t, c.path)
		if c.route == "docs" {
			path = "/api/v1/docs/openapi.yml"
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
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
