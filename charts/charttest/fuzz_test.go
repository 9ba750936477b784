package charttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Whatever path a client sends, Traefik (beside the mirror node, a host on
// both) hands mirrorql only a path its own router serves, or one no module
// of the mirror node would take either (an asset name under
// /graphql/explorer/ or /dashboard/assets/ that does not exist): mirrorql
// never takes a path from the mirror node that it cannot answer. The path
// table seeds it; `go test -fuzz FuzzTraefikClaims` searches further.
func FuzzTraefikClaims(f *testing.F) {
	for _, c := range pathTable {
		f.Add(c.path)
	}
	f.Add("/api/v1/topics/0.0.7/messages/%2e%2e/x")
	f.Add("/api/v1/schedules/%41")
	var (
		proxy, mirrorOnly *traefikProxy
		e                 http.Handler
	)
	const host = "mainnet.mirrornode.example.com"
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n#") || u.Host != "" {
			return // not a request target an HTTP client sends
		}
		if proxy == nil {
			values := readValues(t, valueSets["mirror-node"])
			var mirror []traefikRoute
			for _, ing := range mirrorNodeIngresses(t, host) {
				mirror = append(mirror, ingressRoutes(t, ing)...)
			}
			proxy = newTraefikProxy(t, append(mirrorqlTraefikRoutes(t, values), mirror...))
			mirrorOnly, e = newTraefikProxy(t, mirror), mirrorqlRouter(t)
		}
		owner, path := proxy.route(t, host, target)
		if owner != "mirrorql:http" {
			return // the gRPC route is an exact method: TestGRPCMethodsServed
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code == http.StatusNotFound && strings.TrimSpace(string(body)) == notFound {
			if module, _ := mirrorOnly.route(t, host, target); module != "" {
				t.Errorf("%s goes to mirrorql as %s, which it does not serve, instead of %s", target, path, module)
			}
		}
	})
}
