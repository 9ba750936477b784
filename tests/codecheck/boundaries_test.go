package codecheck

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The house's arrows (README.md, "Layout"), checked on the import graph
// go/packages reads, tests included:
//
//   - model imports none of ours;
//   - app's code imports only model; live's only app and model (it reads
//     through app.LiveStore, which db implements and the service wires);
//   - no face (rest, graph, consensus) imports db, nor another face;
//   - below the faces (model, app, db, live and the test support they
//     use), neither code nor tests import a face or the service: a test at
//     the bottom of the house tests its own layer.
//
// A rule lists the packages it covers (a path, or a path and everything
// under it: "mirrorql/graph/...") and what they may not import, in their
// code alone or in their tests too.
type importRule struct {
	name   string
	who    []string
	tests  bool     // the rule holds for the packages' tests too
	only   []string // when set, the only packages of ours they may import
	denied []string
}

const modulePath = "mirrorql"

var facePackages = []string{"mirrorql/rest/...", "mirrorql/graph/...", "mirrorql/consensus/..."}

// aboveFaces are the faces and what assembles them.
var aboveFaces = append([]string{"mirrorql", "mirrorql/service/...", "mirrorql/dashboard/...", "mirrorql/cache/..."}, facePackages...)

var importRules = []importRule{
	{name: "model imports none of ours", who: []string{"mirrorql/model"}, tests: true, only: []string{"mirrorql/model"}},
	{name: "app's code imports only model", who: []string{"mirrorql/app"}, only: []string{"mirrorql/model"}},
	{name: "live's code imports only app and model", who: []string{"mirrorql/live"}, only: []string{"mirrorql/app", "mirrorql/model"}},
	{name: "no face imports db", who: facePackages, denied: []string{"mirrorql/db/..."}},
	// db's readers (issue 48): a package per layout, below db, that knows
	// of db only what db hands it (driver); neither layout of the other.
	{name: "db's driver imports only app and model", who: []string{"mirrorql/db/internal/driver"}, tests: true,
		only: []string{"mirrorql/app", "mirrorql/model"}},
	{name: "a layout's reader imports only driver, app and model", who: []string{"mirrorql/db/internal/v1", "mirrorql/db/internal/v2"},
		tests: true, only: []string{"mirrorql/db/internal/driver", "mirrorql/app", "mirrorql/model"}},
	{name: "rest imports no other face", who: []string{"mirrorql/rest/..."}, denied: []string{"mirrorql/graph/...", "mirrorql/consensus/..."}},
	{name: "graph imports no other face", who: []string{"mirrorql/graph/..."}, denied: []string{"mirrorql/rest/...", "mirrorql/consensus/..."}},
	{name: "consensus imports no other face", who: []string{"mirrorql/consensus/..."}, denied: []string{"mirrorql/rest/...", "mirrorql/graph/..."}},
	{name: "below the faces, code and tests import no face", tests: true, denied: aboveFaces, who: []string{
		"mirrorql/model", "mirrorql/app/...", "mirrorql/db/...", "mirrorql/live/...",
		"mirrorql/tests/testdb/...", "mirrorql/tools/...",
		"mirrorql/saslprep",
	}},
}

// matches: path is pattern, or under it when pattern ends in "/...".
func matches(path string, patterns []string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if path == base || strings.HasPrefix(path, base+"/") {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
}

// imports are the packages of ours each package imports: code[p] in its
// non-test files, tests[p] in its tests (package p and p_test).
type imports struct{ code, tests map[string][]string }

// loadImports reads the module's import graph.
func loadImports(t *testing.T) imports {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedFiles, Dir: repoRoot, Tests: true}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	g := imports{code: map[string][]string{}, tests: map[string][]string{}}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.ID, e)
		}
		if strings.HasSuffix(p.PkgPath, ".test") {
			continue // the generated main of a test binary
		}
		var ours []string
		for path := range p.Imports {
			if path == modulePath || strings.HasPrefix(path, modulePath+"/") {
				ours = append(ours, path)
			}
		}
		slices.Sort(ours)
		switch path, xtest := strings.CutSuffix(p.PkgPath, "_test"); {
		case xtest:
			g.tests[path] = append(g.tests[path], ours...)
		case p.ID == p.PkgPath:
			g.code[path] = ours
		default: // "p [p.test]": the package with its internal tests
			g.tests[path] = append(g.tests[path], ours...)
		}
	}
	return g
}

// violations are "p imports q" for each import a rule forbids.
func (r importRule) violations(g imports) []string {
	var out []string
	check := func(kind string, graph map[string][]string) {
		for p, deps := range graph {
			if !matches(p, r.who) {
				continue
			}
			for _, q := range deps {
				if q == p || (r.only != nil && matches(q, r.only)) || (r.only == nil && !matches(q, r.denied)) {
					continue
				}
				out = append(out, p+" ("+kind+") imports "+q)
			}
		}
	}
	check("code", g.code)
	if r.tests {
		check("tests", g.tests)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestImportBoundaries holds the module to importRules.
func TestImportBoundaries(t *testing.T) {
	t.Parallel()
	g := loadImports(t)
	// The rules must see the house: far fewer packages means the load no
	// longer finds them (a moved module, a changed working directory).
	if len(g.code) < 20 || len(g.code["mirrorql/db"]) == 0 {
		t.Fatalf("loaded %d packages of ours, db importing %v: the import graph is not the module's", len(g.code), g.code["mirrorql/db"])
	}
	for _, r := range importRules {
		for _, v := range r.violations(g) {
			t.Errorf("%s: %s", r.name, v)
		}
	}
}

// TestImportBoundariesCatch: each rule flags an import it forbids, on a
// made-up graph.
func TestImportBoundariesCatch(t *testing.T) {
	t.Parallel()
	g := imports{
		code: map[string][]string{
			"mirrorql/model":              {"mirrorql/nodehttp"},
			"mirrorql/app":                {"mirrorql/model", "mirrorql/db"},
			"mirrorql/live":               {"mirrorql/app", "mirrorql/db"},
			"mirrorql/graph/view":         {"mirrorql/db"},
			"mirrorql/rest":               {"mirrorql/app", "mirrorql/graph"},
			"mirrorql/consensus":          {"mirrorql/live", "mirrorql/rest"},
			"mirrorql/graph":              {"mirrorql/app", "mirrorql/consensus/mirrorpb"},
			"mirrorql/app/memstore":       {"mirrorql/app"},
			"mirrorql/tests/testdb":       {"mirrorql/db"},
			"mirrorql/service/policy":     {"mirrorql/app"},
			"mirrorql/db/internal/driver": {"mirrorql/model", "mirrorql/db/internal/v1"},
			"mirrorql/db/internal/v1":     {"mirrorql/db/internal/driver", "mirrorql/db/internal/v2"},
			"mirrorql/db/internal/v2":     {"mirrorql/db/internal/driver", "mirrorql/app", "mirrorql/db"},
		},
		tests: map[string][]string{
			"mirrorql/db":    {"mirrorql/db", "mirrorql/rest", "mirrorql/tests/testdb"},
			"mirrorql/model": {"mirrorql/app"},
			"mirrorql/graph": {"mirrorql/db"}, // a face's test over the database: allowed
			"mirrorql/live":  {"mirrorql/db", "mirrorql/service/policy"},
		},
	}
	want := map[string][]string{
		"model imports none of ours":             {"mirrorql/model (code) imports mirrorql/nodehttp", "mirrorql/model (tests) imports mirrorql/app"},
		"app's code imports only model":          {"mirrorql/app (code) imports mirrorql/db"},
		"live's code imports only app and model": {"mirrorql/live (code) imports mirrorql/db"},
		"no face imports db":                     {"mirrorql/graph/view (code) imports mirrorql/db"},
		"db's driver imports only app and model": {"mirrorql/db/internal/driver (code) imports mirrorql/db/internal/v1"},
		"a layout's reader imports only driver, app and model": {"mirrorql/db/internal/v1 (code) imports mirrorql/db/internal/v2",
			"mirrorql/db/internal/v2 (code) imports mirrorql/db"},
		"rest imports no other face":                     {"mirrorql/rest (code) imports mirrorql/graph"},
		"graph imports no other face":                    {"mirrorql/graph (code) imports mirrorql/consensus/mirrorpb"},
		"consensus imports no other face":                {"mirrorql/consensus (code) imports mirrorql/rest"},
		"below the faces, code and tests import no face": {"mirrorql/db (tests) imports mirrorql/rest", "mirrorql/live (tests) imports mirrorql/service/policy"},
	}
	for _, r := range importRules {
		if got := r.violations(g); !slices.Equal(got, want[r.name]) {
			t.Errorf("%s: flagged %q, want %q", r.name, got, want[r.name])
		}
	}
}
