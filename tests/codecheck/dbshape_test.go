package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The shape of the query layer (package mirrorql/db, its non-test files), as
// issue 48 set it:
//
//   - the layout interface (reader) has at most 10 methods;
//   - no reader implements a method as a stub, a body that only returns a
//     constant (what a reader keeps account of is the optional bookkeeper,
//     which v1's does not implement);
//   - Citus's reader (citusReader) overrides at most 6 of the v2 reader's
//     methods;
//   - no function is longer than 60 lines.
const (
	maxReaderMethods  = 10
	maxCitusOverrides = 6
	maxFuncLines      = 60
	readerReceivers   = "v1Reader v2Reader citusReader"
)

func TestDBShape(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "db")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	findings, seen := dbShape(fset, files)
	for _, f := range findings {
		t.Error(f)
	}
	for _, name := range []string{"reader", "citusReader"} {
		if !seen[name] {
			t.Errorf("package db has no %s: the check no longer sees what it counts (a renamed type)", name)
		}
	}
}

// TestDBShapeCatches: each rule flags a fixture that breaks it.
func TestDBShapeCatches(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("package db\n\ntype reader interface {\n")
	for i := range maxReaderMethods + 1 {
		fmt.Fprintf(&b, "\tm%d()\n", i)
	}
	b.WriteString("}\n\ntype v1Reader struct{}\n\nfunc (r *v1Reader) fallbacks(string) int64 { return 0 }\n")
	b.WriteString("func (r *v1Reader) answer() error { if r == nil { return nil }; return nil }\n")
	b.WriteString("\ntype citusReader struct{}\n\n")
	for i := range maxCitusOverrides + 1 {
		fmt.Fprintf(&b, "func (citusReader) o%d() {}\n", i)
	}
	b.WriteString("\nfunc long() {\n" + strings.Repeat("\t_ = 0\n", maxFuncLines) + "}\n")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "fixture.go", b.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	findings, _ := dbShape(fset, []*ast.File{f})
	want := []string{"reader has 11 methods", "v1Reader.fallbacks is a stub", "citusReader overrides 7", "long is 62 lines"}
	if len(findings) != len(want) {
		t.Fatalf("findings %q, want one each of %q", findings, want)
	}
	for i, w := range want {
		if !strings.Contains(findings[i], w) {
			t.Errorf("finding %q, want %q", findings[i], w)
		}
	}
}

// dbShape is what of files breaks the rules above, in the rules' order, and
// which of the types it counts it saw.
func dbShape(fset *token.FileSet, files []*ast.File) (findings []string, seen map[string]bool) {
	seen = map[string]bool{}
	var readerMethods, citusMethods int
	var stubs, long []string
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || ts.Name.Name != "reader" {
						continue
					}
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						seen["reader"] = true
						readerMethods = it.Methods.NumFields()
					}
				}
			case *ast.FuncDecl:
				recv := receiverName(d)
				if recv == "citusReader" {
					seen[recv] = true
					citusMethods++
				}
				if strings.Contains(" "+readerReceivers+" ", " "+recv+" ") && isStub(d) {
					stubs = append(stubs, fmt.Sprintf("%s.%s is a stub (%s): a reader that keeps nothing does not implement it",
						recv, d.Name.Name, fset.Position(d.Pos())))
				}
				if n := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1; n > maxFuncLines {
					long = append(long, fmt.Sprintf("%s is %d lines (%s), more than %d", d.Name.Name, n, fset.Position(d.Pos()), maxFuncLines))
				}
			}
		}
	}
	if readerMethods > maxReaderMethods {
		findings = append(findings, fmt.Sprintf("reader has %d methods, more than %d", readerMethods, maxReaderMethods))
	}
	sort.Strings(stubs)
	findings = append(findings, stubs...)
	if citusMethods > maxCitusOverrides {
		findings = append(findings, fmt.Sprintf("citusReader overrides %d methods, more than %d", citusMethods, maxCitusOverrides))
	}
	return append(findings, long...), seen
}

// receiverName is the name of d's receiver type, "" for a function.
func receiverName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// isStub: d's body is one return of constants (literals, nil, true, false).
func isStub(d *ast.FuncDecl) bool {
	if d.Body == nil || len(d.Body.List) != 1 {
		return false
	}
	ret, ok := d.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) == 0 {
		return false
	}
	for _, r := range ret.Results {
		switch v := r.(type) {
		case *ast.BasicLit:
		case *ast.Ident:
			if v.Name != "nil" && v.Name != "true" && v.Name != "false" {
				return false
			}
		default:
			return false
		}
	}
	return true
}
