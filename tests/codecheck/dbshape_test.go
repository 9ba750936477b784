package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The shape of the query layer (package mirrorql/db and the packages under
// db/internal: what db hands a layout's reader, and a package per layout;
// their non-test files), as issue 48 set it:
//
//   - the layout interface (driver.Reader) has at most 10 methods;
//   - no reader implements a method as a stub, a body that only returns a
//     constant (what a reader keeps account of is the optional
//     driver.Bookkeeper, which v1's does not implement);
//   - Citus's reader (v2.Citus, the v2 reader embedded) overrides at most 6
//     of the v2 reader's methods;
//   - no function is longer than 60 lines.
const (
	maxReaderMethods  = 10
	maxCitusOverrides = 6
	maxFuncLines      = 60
)

// The types the rules name, by package directory (from db's): the layout
// interface, the readers, and Citus's.
const (
	readerInterfacePkg, readerInterface = "internal/driver", "Reader"
	citusPkg, citusReader               = "internal/v2", "Citus"
)

// readerReceivers are the readers, each of its package.
var readerReceivers = map[string][]string{"internal/v1": {"Reader"}, "internal/v2": {"Reader", "Citus"}}

func TestDBShape(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "db")
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		files[filepath.ToSlash(dir)] = append(files[filepath.ToSlash(dir)], f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{".", readerInterfacePkg, citusPkg, "internal/v1"} {
		if len(files[dir]) == 0 {
			t.Errorf("no Go files in db/%s: the check no longer sees the packages it counts (a moved package)", dir)
		}
	}
	findings, seen := dbShape(fset, files)
	for _, f := range findings {
		t.Error(f)
	}
	for _, name := range []string{readerInterfacePkg + "." + readerInterface, citusPkg + "." + citusReader} {
		if !seen[name] {
			t.Errorf("db/%s is not there: the check no longer sees what it counts (a renamed type)", name)
		}
	}
}

// TestDBShapeCatches: each rule flags a fixture that breaks it.
func TestDBShapeCatches(t *testing.T) {
	t.Parallel()
	var iface, v1, v2, db strings.Builder
	iface.WriteString("package driver\n\ntype Reader interface {\n")
	for i := range maxReaderMethods + 1 {
		fmt.Fprintf(&iface, "\tM%d()\n", i)
	}
	iface.WriteString("}\n")
	v1.WriteString("package v1\n\ntype Reader struct{}\n\nfunc (r *Reader) Fallbacks(string) int64 { return 0 }\n")
	v1.WriteString("func (r *Reader) Answer() error { if r == nil { return nil }; return nil }\n")
	v2.WriteString("package v2\n\ntype Citus struct{ *Reader }\n\n")
	for i := range maxCitusOverrides + 1 {
		fmt.Fprintf(&v2, "func (Citus) O%d() {}\n", i)
	}
	// A stub elsewhere is no reader's: not flagged.
	v2.WriteString("\ntype server struct{}\n\nfunc (server) sizesKnown() bool { return false }\n")
	db.WriteString("package db\n\nfunc long() {\n" + strings.Repeat("\t_ = 0\n", maxFuncLines) + "}\n")
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
	for dir, src := range map[string]string{readerInterfacePkg: iface.String(), "internal/v1": v1.String(), citusPkg: v2.String(), ".": db.String()} {
		f, err := parser.ParseFile(fset, dir+"/fixture.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[dir] = []*ast.File{f}
	}
	findings, _ := dbShape(fset, files)
	want := []string{"Reader has 11 methods", "Reader.Fallbacks is a stub", "Citus overrides 7", "long is 62 lines"}
	if len(findings) != len(want) {
		t.Fatalf("findings %q, want one each of %q", findings, want)
	}
	for i, w := range want {
		if !strings.Contains(findings[i], w) {
			t.Errorf("finding %q, want %q", findings[i], w)
		}
	}
}

// dbShape is what of files (by package directory, from db's) breaks the
// rules above, in the rules' order, and which of the types it counts it
// saw ("dir.Name").
func dbShape(fset *token.FileSet, files map[string][]*ast.File) (findings []string, seen map[string]bool) {
	seen = map[string]bool{}
	var readerMethods, citusMethods int
	var stubs, long []string
	dirs := make([]string, 0, len(files))
	for dir := range files {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		for _, f := range files[dir] {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					if dir != readerInterfacePkg {
						continue
					}
					for _, s := range d.Specs {
						ts, ok := s.(*ast.TypeSpec)
						if !ok || ts.Name.Name != readerInterface {
							continue
						}
						if it, ok := ts.Type.(*ast.InterfaceType); ok {
							seen[dir+"."+readerInterface] = true
							readerMethods = it.Methods.NumFields()
						}
					}
				case *ast.FuncDecl:
					recv := receiverName(d)
					if dir == citusPkg && recv == citusReader {
						seen[dir+"."+recv] = true
						citusMethods++
					}
					if recv != "" && slices.Contains(readerReceivers[dir], recv) && isStub(d) {
						stubs = append(stubs, fmt.Sprintf("%s.%s is a stub (%s): a reader that keeps nothing does not implement it",
							recv, d.Name.Name, fset.Position(d.Pos())))
					}
					if n := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1; n > maxFuncLines {
						long = append(long, fmt.Sprintf("%s is %d lines (%s), more than %d", d.Name.Name, n, fset.Position(d.Pos()), maxFuncLines))
					}
				}
			}
		}
	}
	if readerMethods > maxReaderMethods {
		findings = append(findings, fmt.Sprintf("%s has %d methods, more than %d", readerInterface, readerMethods, maxReaderMethods))
	}
	sort.Strings(stubs)
	findings = append(findings, stubs...)
	if citusMethods > maxCitusOverrides {
		findings = append(findings, fmt.Sprintf("%s overrides %d methods, more than %d", citusReader, citusMethods, maxCitusOverrides))
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
