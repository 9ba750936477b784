package codecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutTestsAskTheirLayouts: the Makefile's LAYOUT_TESTS, which the v2
// and Citus runs leave to the v1 run, are tests that build only the layouts
// they name. A listed test that came to read the run's layout (testdb.New,
// testdb.NewRecent, directly or through a helper of its package) would lose
// its v2 run without a word; a name no test has any more is a stale entry.
func TestLayoutTestsAskTheirLayouts(t *testing.T) {
	names := layoutTests(t)
	if len(names) == 0 {
		t.Fatal("Makefile: no LAYOUT_TESTS")
	}
	found := map[string]bool{}
	for _, dir := range []string{"db", "db/internal/driver", "db/internal/v1", "db/internal/v2", "tests", "graph", "live", "seed", "service", "app/memstore"} {
		funcs := testFuncs(t, filepath.Join(repoRoot, dir))
		for _, name := range names {
			fn, ok := funcs[name]
			if !ok {
				continue
			}
			found[name] = true
			if via := readsRunLayout(fn, funcs, map[string]bool{}); via != "" {
				t.Errorf("%s (%s) reads the run's layout through %s: take it out of LAYOUT_TESTS", name, dir, via)
			}
		}
	}
	for _, name := range names {
		if !found[name] {
			t.Errorf("LAYOUT_TESTS names %s, which no test package has", name)
		}
	}
}

// TestLayoutTestsAskTheirLayoutsCatches: the check sees testdb.New behind a
// helper.
func TestLayoutTestsAskTheirLayoutsCatches(t *testing.T) {
	const src = `package x
func helper(t *testing.T) { testdb.New(t) }
func TestOwn(t *testing.T) { testdb.NewLayout(t, testdb.LayoutV2) }
func TestRun(t *testing.T) { helper(t) }`
	f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			funcs[fn.Name.Name] = fn
		}
	}
	if via := readsRunLayout(funcs["TestOwn"], funcs, map[string]bool{}); via != "" {
		t.Errorf("TestOwn: %s, want none", via)
	}
	if via := readsRunLayout(funcs["TestRun"], funcs, map[string]bool{}); via != "helper: testdb.New" {
		t.Errorf("TestRun: %q, want helper: testdb.New", via)
	}
}

// layoutTests are the names the Makefile's LAYOUT_TESTS lists.
func layoutTests(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAYOUT_TESTS\s*=((?:[^\n]*\\\n)*[^\n]*)`).FindSubmatch(b)
	if m == nil {
		return nil
	}
	return strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
}

// testFuncs are the functions of dir's test files, by name.
func testFuncs(t *testing.T, dir string) map[string]*ast.FuncDecl {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				funcs[fn.Name.Name] = fn
			}
		}
	}
	return funcs
}

// readsRunLayout names the call through which fn builds a database of the
// run's layout, following the calls to funcs; "" when it builds none.
func readsRunLayout(fn *ast.FuncDecl, funcs map[string]*ast.FuncDecl, seen map[string]bool) string {
	if fn == nil || fn.Body == nil || seen[fn.Name.Name] {
		return ""
	}
	seen[fn.Name.Name] = true
	via := ""
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if via != "" {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch f := call.Fun.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := f.X.(*ast.Ident); ok && pkg.Name == "testdb" && (f.Sel.Name == "New" || f.Sel.Name == "NewRecent") {
				via = "testdb." + f.Sel.Name
			}
		case *ast.Ident:
			if inner := readsRunLayout(funcs[f.Name], funcs, seen); inner != "" {
				via = f.Name + ": " + inner
			}
		}
		return true
	})
	return via
}
