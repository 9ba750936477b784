// Package apispec checks recorded or live HTTP responses against mirrorql's
// OpenAPI document (openapi.yml at the module root).
package apispec

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Spec is a loaded and validated OpenAPI document that can check responses.
// It is safe for concurrent use.
type Spec struct {
	// Doc is the document as loaded.
	Doc *openapi3.T

	routes []route // in matching order, see matchingOrder

	mu   sync.Mutex
	seen map[operationKey]map[int]int // validated responses per operation and status
}

// route is one path template with a gorilla/mux router that knows only it.
type route struct {
	path   string
	router routers.Router
}

type operationKey struct{ method, path string }

// Load reads, resolves and validates the OpenAPI document at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read OpenAPI document: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse loads an OpenAPI document from YAML or JSON bytes and validates it.
// External references are not allowed.
func Parse(data []byte) (*Spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("invalid OpenAPI document: %w", err)
	}
	s := &Spec{Doc: doc, seen: map[operationKey]map[int]int{}}
	for _, p := range matchingOrder(doc.Paths.Keys()) {
		// Each template gets a router of its own, built from a copy of the
		// document that holds only this path and a relative server, so that
		// matching depends on the path alone (not on host or scheme) and the
		// order is ours, not the router's.
		sub := *doc
		sub.Servers = openapi3.Servers{{URL: "/"}}
		sub.Paths = openapi3.NewPaths(openapi3.WithPath(p, doc.Paths.Value(p)))
		r, err := gorillamux.NewRouter(&sub)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", p, err)
		}
		s.routes = append(s.routes, route{path: p, router: r})
	}
	return s, nil
}

// matchingOrder sorts path templates so that, segment by segment from the
// left, a literal segment is tried before a {parameter}. Thus
// /api/v1/topics/messages/{timestamp} wins over /api/v1/topics/{topicId}/messages
// for /api/v1/topics/messages/messages, as in the service.
func matchingOrder(paths []string) []string {
	out := slices.Clone(paths)
	slices.SortFunc(out, func(a, b string) int {
		as, bs := strings.Split(a, "/"), strings.Split(b, "/")
		for i := 0; i < len(as) && i < len(bs); i++ {
			av, bv := isParam(as[i]), isParam(bs[i])
			if av != bv {
				if av {
					return 1
				}
				return -1
			}
			if c := strings.Compare(as[i], bs[i]); c != 0 && !av {
				return c
			}
		}
		if c := len(as) - len(bs); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

func isParam(segment string) bool { return strings.HasPrefix(segment, "{") }

// Route returns the operation of the document that serves method and rawURL
// (a path with optional query, or an absolute URL whose host is ignored), and
// the path parameters.
//
// Like the service, matching first tries the path as given and then the path
// lower-cased without a single trailing slash.
func (s *Spec) Route(method, rawURL string) (*routers.Route, map[string]string, error) {
	found, params, _, err := s.route(method, rawURL)
	return found, params, err
}

func (s *Spec) route(method, rawURL string) (*routers.Route, map[string]string, *http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse URL %q: %w", rawURL, err)
	}
	candidates := []string{u.EscapedPath()}
	if alt := strings.ToLower(strings.TrimSuffix(u.EscapedPath(), "/")); alt != candidates[0] && alt != "" {
		candidates = append(candidates, alt)
	}
	var notAllowed error
	for _, p := range candidates {
		target := &url.URL{Path: mustUnescape(p), RawPath: p, RawQuery: u.RawQuery}
		req, err := http.NewRequest(method, target.String(), nil)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("build request for %q: %w", rawURL, err)
		}
		for _, r := range s.routes {
			found, params, err := r.router.FindRoute(req)
			if err == nil {
				found.Spec = s.Doc
				return found, params, req, nil
			}
			if notAllowed == nil && errors.Is(err, routers.ErrMethodNotAllowed) {
				notAllowed = fmt.Errorf("%s %s: %w (path %s)", method, rawURL, err, r.path)
			}
		}
	}
	if notAllowed != nil {
		return nil, nil, nil, notAllowed
	}
	return nil, nil, nil, fmt.Errorf("%s %s: %w", method, rawURL, routers.ErrPathNotFound)
}

func mustUnescape(p string) string {
	if v, err := url.PathUnescape(p); err == nil {
		return v
	}
	return p
}

// ValidateResponse checks that status is documented for the operation that
// serves method and rawURL, that the documented response headers present in
// header match their schemas, and that body matches the response schema of
// its content type. A missing Content-Type is taken as application/json.
func (s *Spec) ValidateResponse(method, rawURL string, status int, header http.Header, body []byte) error {
	found, params, req, err := s.route(method, rawURL)
	if err != nil {
		return err
	}
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      found,
		},
		Status: status,
		Header: h,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("%s %s -> %d (%s): %w", method, rawURL, status, found.Path, err)
	}
	s.mu.Lock()
	k := operationKey{found.Method, found.Path}
	if s.seen[k] == nil {
		s.seen[k] = map[int]int{}
	}
	s.seen[k][status]++
	s.mu.Unlock()
	return nil
}

// OperationCoverage says how often the responses of one operation were
// validated successfully.
type OperationCoverage struct {
	Method string
	Path   string
	// Validated counts successful validations per status code.
	Validated map[int]int
	// Missing lists documented status codes never validated.
	Missing []string
}

// Coverage lists every operation of the document, sorted by path and method,
// with the responses validated so far.
func (s *Spec) Coverage() []OperationCoverage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []OperationCoverage
	for _, p := range s.Doc.Paths.InMatchingOrder() {
		for method, op := range s.Doc.Paths.Value(p).Operations() {
			c := OperationCoverage{Method: method, Path: p, Validated: map[int]int{}}
			for status, n := range s.seen[operationKey{method, p}] {
				c.Validated[status] = n
			}
			for code := range op.Responses.Map() {
				if n, err := strconv.Atoi(code); err != nil || c.Validated[n] == 0 {
					c.Missing = append(c.Missing, code)
				}
			}
			slices.Sort(c.Missing)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b OperationCoverage) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}
