package apispec

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"mirrorql/rest"
)

// documentedNames are path parameters openapi.yml names otherwise than the
// route's template: rest-java's topic route keeps `:id` in its template,
// which is the route label of the metrics and logs operators' dashboards
// read, while the document keeps the mirror node's name, topicId.
var documentedNames = map[string]string{rest.RouteTopic + " id": "topicId"}

// TestRoutesMatchTable holds openapi.yml to the REST face's routing table
// (rest.Routes): every route is documented at its path with GET, with its
// path parameters and the query parameters its handler accepts, and every
// /api/v1 path documented is a route (but the document's own).
func TestRoutesMatchTable(t *testing.T) {
	doc := loadSpec(t).Doc
	documented := map[string]bool{}
	for path := range doc.Paths.Map() {
		if strings.HasPrefix(path, "/api/v1/") && path != "/api/v1/docs/openapi.yml" {
			documented[path] = true
		}
	}
	for _, r := range rest.Routes() {
		path, names := r.Path, r.PathParams()
		for i, name := range names {
			if doc, ok := documentedNames[r.Path+" "+name]; ok {
				names[i] = doc
			}
			path = strings.Replace(path, ":"+name, "{"+names[i]+"}", 1)
		}
		delete(documented, path)
		item := doc.Paths.Find(path)
		if item == nil || item.Get == nil {
			t.Errorf("%s (%s): not in openapi.yml with GET", path, r.Name)
			continue
		}
		for method, op := range item.Operations() {
			if method != "GET" && method != "HEAD" {
				t.Errorf("%s: openapi.yml documents %s, which the route does not serve (%v)", path, method, op.OperationID)
			}
		}
		params := map[string][]string{}
		for _, p := range append(slices.Clone(item.Parameters), item.Get.Parameters...) {
			if p.Value != nil {
				params[p.Value.In] = append(params[p.Value.In], p.Value.Name)
			}
		}
		if got, want := sorted(params[openapi3.ParameterInPath]), sorted(names); !slices.Equal(got, want) {
			t.Errorf("%s: path parameters %q in openapi.yml, %q in the route", path, got, want)
		}
		if got, want := sorted(params[openapi3.ParameterInQuery]), r.QueryParams(); !slices.Equal(got, want) {
			t.Errorf("%s: query parameters %q in openapi.yml, %q accepted by the route", path, got, want)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(documented)) {
		t.Errorf("%s: in openapi.yml, not a route of rest.Routes", path)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
