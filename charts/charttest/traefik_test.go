package charttest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/traefik/traefik/v3/pkg/middlewares/requestdecorator"
	muxhttp "github.com/traefik/traefik/v3/pkg/muxer/http"
	traefikv1 "github.com/traefik/traefik/v3/pkg/provider/kubernetes/crd/traefikio/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
)

// traefikRoute is one router as Traefik holds it: its rule, its priority (0:
// Traefik ranks it by the length of its rule) and where it sends a request.
type traefikRoute struct {
	rule     string
	priority int
	owner    string
	// replacePath is the path a replacePath middleware on the router sets.
	replacePath string
}

// The Ingress annotations Traefik's Kubernetes Ingress provider reads for a
// router (doc.traefik.io, "Traefik & Kubernetes Ingress", annotations).
const (
	annotationPathMatcher = "traefik.ingress.kubernetes.io/router.pathmatcher"
	annotationPriority    = "traefik.ingress.kubernetes.io/router.priority"
)

// ingressRoutes are the routers Traefik's Kubernetes Ingress provider makes of
// an Ingress, one per host and path, as its documentation describes them: a
// host gives Host(`host`); the path's matcher is Path for pathType Exact,
// else the router.pathmatcher annotation for ImplementationSpecific, else
// PathPrefix (character-wise, Prefix included, strictPrefixMatching being
// off by default); the two joined with &&; the priority is the
// router.priority annotation, else none. The provider quotes with Go's
// double-quoted strings, which lengthen the rule by their escapes: that
// length is the router's rank. Wildcard hosts are refused here (the mirror
// node renders none). owner is the backend Service without the release's
// prefix.
func ingressRoutes(t *testing.T, ing *networkingv1.Ingress) []traefikRoute {
	t.Helper()
	priority := 0
	if p, ok := ing.Annotations[annotationPriority]; ok {
		var err error
		if priority, err = strconv.Atoi(p); err != nil {
			t.Fatalf("ingress %s: priority %q", ing.Name, p)
		}
	}
	var out []traefikRoute
	for _, r := range ing.Spec.Rules {
		if strings.HasPrefix(r.Host, "*.") {
			t.Fatalf("ingress %s: wildcard host %q", ing.Name, r.Host)
		}
		for _, p := range r.HTTP.Paths {
			matcher := "PathPrefix"
			switch {
			case p.PathType != nil && *p.PathType == networkingv1.PathTypeExact:
				matcher = "Path"
			case p.PathType == nil || *p.PathType == networkingv1.PathTypeImplementationSpecific:
				if m := ing.Annotations[annotationPathMatcher]; m != "" {
					matcher = m
				}
			}
			var parts []string
			if r.Host != "" {
				parts = append(parts, fmt.Sprintf("Host(%q)", r.Host))
			}
			parts = append(parts, fmt.Sprintf("%s(%q)", matcher, p.Path))
			owner := strings.TrimPrefix(p.Backend.Service.Name, release+"-")
			out = append(out, traefikRoute{rule: strings.Join(parts, " && "), priority: priority, owner: owner})
		}
	}
	return out
}

// ingressRouteRoutes are the routers of one of mirrorql's IngressRoutes: each
// route's match and priority as written (Traefik's CRD provider takes them
// as they are), the owner "mirrorql:<port>", and the path a replacePath
// middleware of the chart's sets.
func ingressRouteRoutes(t *testing.T, ir *traefikv1.IngressRoute, middlewares map[string]*traefikv1.Middleware) []traefikRoute {
	t.Helper()
	var out []traefikRoute
	for _, r := range ir.Spec.Routes {
		if len(r.Services) != 1 {
			t.Fatalf("IngressRoute %s: %d services on %s", ir.Name, len(r.Services), r.Match)
		}
		s := r.Services[0]
		if s.Name != ir.Name || s.Port.String() == "" {
			t.Fatalf("IngressRoute %s: service %s:%s", ir.Name, s.Name, s.Port.String())
		}
		rt := traefikRoute{rule: r.Match, priority: r.Priority, owner: "mirrorql:" + s.Port.String()}
		for _, m := range r.Middlewares {
			mw, ok := middlewares[m.Name]
			if !ok {
				t.Fatalf("IngressRoute %s: middleware %s not rendered", ir.Name, m.Name)
			}
			if mw.Spec.ReplacePath != nil {
				rt.replacePath = mw.Spec.ReplacePath.Path
			}
		}
		out = append(out, rt)
	}
	return out
}

// traefikProxy is Traefik's HTTP router over a set of routers: its own rule
// parser and muxer (github.com/traefik/traefik/v3/pkg/muxer/http), the
// request decorator its Host matcher reads the host from, and, before them,
// the path sanitizing an entry point does by default (sanitizePath).
type traefikProxy struct {
	mux       *muxhttp.Muxer
	decorator *requestdecorator.RequestDecorator
}

// The answer of a proxied request: who took it and the path it got.
const (
	headerOwner = "X-Owner"
	headerPath  = "X-Path"
)

func newTraefikProxy(t *testing.T, routes []traefikRoute) *traefikProxy {
	t.Helper()
	parser, err := muxhttp.NewSyntaxParser()
	if err != nil {
		t.Fatal(err)
	}
	m := muxhttp.NewMuxer(parser)
	for _, r := range routes {
		priority := r.priority
		if priority == 0 {
			priority = muxhttp.GetRulePriority(r.rule) // what Traefik does with an unset priority
		}
		if err := m.AddRoute(r.rule, "v3", priority, backend(r)); err != nil {
			t.Fatalf("Traefik refuses the rule %s: %v", r.rule, err)
		}
	}
	return &traefikProxy{mux: m, decorator: requestdecorator.New(nil)}
}

func backend(r traefikRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.EscapedPath() // as the backend's request line carries it
		if r.replacePath != "" {
			p = r.replacePath
		}
		w.Header().Set(headerOwner, r.owner)
		w.Header().Set(headerPath, p)
	})
}

// sanitizePath is what a Traefik v3 entry point does to a request's path
// before routing when http.sanitizePath is on, its default: the ".", ".."
// and empty segments removed as RFC 3986 §6.2.2.3 says, a trailing slash
// kept. Traefik's function is internal to its server; this is the behaviour
// its documentation gives ("removal of /./, /../ and multiple slash
// sequences"), which net/url's JoinPath does.
func sanitizePath(u *url.URL) *url.URL { return u.JoinPath() }

// route sends a GET for target (a path, with a query if any) with host to the
// proxy: the owner ("" when Traefik answers 404 itself) and the path the
// backend receives, escaped.
func (p *traefikProxy) route(t *testing.T, host, target string) (owner, path string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+target, nil)
	req.URL = sanitizePath(req.URL)
	req.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	p.decorator.ServeHTTP(rec, req, p.mux.ServeHTTP)
	if rec.Code == http.StatusNotFound && rec.Header().Get(headerOwner) == "" {
		return "", ""
	}
	return rec.Header().Get(headerOwner), rec.Header().Get(headerPath)
}

// mirrorNodeIngresses are the mirror node's Ingresses (testdata, with its
// provenance), each rule given host.
func mirrorNodeIngresses(t *testing.T, host string) []*networkingv1.Ingress {
	t.Helper()
	b, err := os.ReadFile("testdata/mirror-node-ingresses.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []*networkingv1.Ingress
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		ing := &networkingv1.Ingress{}
		if err := decodeStrict(doc, ing); err != nil {
			t.Fatal(err)
		}
		for i := range ing.Spec.Rules {
			ing.Spec.Rules[i].Host = host
		}
		out = append(out, ing)
	}
	if len(out) != 5 {
		t.Fatalf("%d Ingresses in the testdata, want the 5 modules'", len(out))
	}
	return out
}

func stripComments(doc []byte) []byte {
	var keep [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) && !bytes.Equal(bytes.TrimSpace(l), []byte("---")) {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}

// mirrorqlTraefikRoutes renders mirrorql with values and returns the routers
// of its IngressRoutes.
func mirrorqlTraefikRoutes(t *testing.T, values map[string]any) []traefikRoute {
	t.Helper()
	objs := render(t, values)
	middlewares := map[string]*traefikv1.Middleware{}
	for _, o := range find(objs, "Middleware") {
		mw := typed(t, o).(*traefikv1.Middleware)
		middlewares[mw.Name] = mw
	}
	var out []traefikRoute
	for _, o := range find(objs, "IngressRoute") {
		out = append(out, ingressRouteRoutes(t, typed(t, o).(*traefikv1.IngressRoute), middlewares)...)
	}
	return out
}
