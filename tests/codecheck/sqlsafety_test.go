package codecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The SQL safety rule, checked on the query layer (package mirrorql/db and
// the packages under db/internal: the readers of the layouts and what they
// share; their non-test files) with full type information. "The query
// layer's own" below means a function, method or type of any of them.
//
// Every argument of type string (or ...string) passed to a function or method
// of bun, database/sql, pgx or pgconn — the query text of Where, OrderExpr,
// ColumnExpr, TableExpr, Join, NewRaw, ExecContext, QueryContext, Exec and the
// like — must be "SQL-safe", which is one of:
//
//  1. a constant expression (literal, named constant, or constants joined
//     with +): the compiler's constant folding decides, so no string built at
//     run time passes;
//  2. (retired: the operators' SQL is driver's Comparison, which rule 3
//     admits as every return of it is a constant: =, !=, <, <=, >, >=);
//  3. a call of a function or method of the query layer's own whose result (at
//     that position, for one with several results) is SQL-safe by these
//     same rules in every return statement of it, its parameters counting as
//     unsafe (`direction(o)` returns "ASC" or "DESC"; `f.page(q)` returns
//     its local orderColumn) — for a method of one of its interfaces, in
//     every implementation of it there (the v2 reader's servers); or a call of one of the helpers listed in
//     sqlHelpers, whose result is built only from its arguments and fixed
//     text (Prefixed: qualifies a column list with an alias), with every
//     string argument SQL-safe;
//  4. pgx.Identifier{...}.Sanitize() (a quoted identifier);
//  5. a + of SQL-safe operands, or one in parentheses;
//  6. a variable local to the function whose every assignment in that
//     function is SQL-safe (`orderColumn := "consensus_timestamp"`, then
//     `orderColumn = "sequence_number"`), a tuple assignment from a call
//     counting by rule 3 (`q, orderColumn := f.page(q)`);
//  7. inside one of the query layer's own SQL entry points (sqlSinks: the
//     method query and the helpers around it, which send a fixed statement
//     with bound parameters, and the executor db hands its readers,
//     driver.Exec, whose methods are checked at every call through the
//     interface), a
//     string parameter of it: every call of such a function is checked
//     like a call of bun or database/sql, so its SQL text is SQL-safe at
//     every call site;
//  8. the SQL field of a piped statement (driver.Piped, db's pipeline): every
//     piped literal's SQL is checked where it is written, like a call's
//     argument.
//
// Values from a request travel only as the bind arguments (the ...any
// parameters), which the drivers and bun pass or quote as values. Anything
// else — fmt.Sprintf, strconv, a parameter, a struct field, a string built
// with strings.Builder — fails the test with its position.

// sqlPackages are the packages whose string parameters take SQL text.
var sqlPackages = map[string]bool{
	"github.com/uptrace/bun":         true,
	"github.com/uptrace/bun/schema":  true,
	"database/sql":                   true,
	"github.com/jackc/pgx/v5":        true,
	"github.com/jackc/pgx/v5/pgconn": true,
	"github.com/jackc/pgx/v5/stdlib": true,
}

// notSQL are the functions of those packages whose string parameters are
// not SQL text (connection strings, driver names).
var notSQL = map[string]bool{
	"github.com/jackc/pgx/v5.ParseConfig":               true,
	"github.com/jackc/pgx/v5.ParseConfigWithOptions":    true,
	"github.com/jackc/pgx/v5.Connect":                   true,
	"github.com/jackc/pgx/v5/pgconn.ParseConfig":        true,
	"github.com/jackc/pgx/v5/pgconn.Connect":            true,
	"github.com/jackc/pgx/v5/stdlib.RegisterConnConfig": true,
	"database/sql.Open":                                 true,
}

// sqlSinks are functions and methods of the query layer that take SQL text
// in their string parameters and pass it on to the driver (rule 7): db's,
// v1's oneMessage, and the executor's (driver.Exec, db's executor).
var sqlSinks = map[string]bool{"query": true, "queryPlanned": true, "run": true, "queryPgx": true, "oneMessage": true, "topics": true,
	"Query": true, "QueryPlanned": true, "QueryRows": true}

// sqlHelpers are query-layer functions that build SQL text in ways rule 3
// cannot follow (byte slices, cached texts), safe when their string
// arguments are. The v2 layout's statements (sliceSQL, byTimestampV2SQL,
// submitTopicV2SQL, runSQL, bySequenceBatchSQL, activityRunSQL, probeSQL) name partitions: they take the partitions
// themselves, whose names come from pg_catalog and are quoted by
// pgx.Identifier when the catalog is read (TestPartitionNamesQuoted), and
// whose bounds are numbers (partition.within; activityBoundsSQL takes a
// block of partitions' bounds alone).
var sqlHelpers = map[string]bool{"Prefixed": true, "sliceSQL": true, "byTimestampV2SQL": true,
	"probeSQL": true, "submitTopicV2SQL": true, "runSQL": true, "activityRunSQL": true,
	"bySequenceBatchSQL": true, "bySequenceTopicSQL": true, "bySequenceOneSQL": true, "livePollNamedSQL": true,
	"activityBoundsSQL": true}

// TestPartitionNamesQuoted: a partition's name, which the v2 statements put
// in their SQL text (sqlHelpers), is only ever a quoted identifier. Checked
// on the v2 reader's code (the package of type partition,
// mirrorql/db/internal/v2) with full type information: every value stored in
// partition.name (by a composite literal or an assignment) is
// pgx.Identifier{...}.Sanitize() (rule 4 of the SQL safety rule), another
// partition's name, or a parameter of a function every call of which passes
// such a value in its place (parsePartition, given the catalog's names).
func TestPartitionNamesQuoted(t *testing.T) {
	t.Parallel()
	findings, stores := checkPartitionNames(t, nil)
	for _, f := range findings {
		t.Error(f)
	}
	if stores == 0 {
		t.Error("no partition name stored in package mirrorql/db/internal/v2: the check no longer sees them (a renamed type or field)")
	}
}

// TestPartitionNamesQuotedCatches: the check flags names that are not
// quoted identifiers, in a file added to the v2 reader's package as an
// overlay.
func TestPartitionNamesQuotedCatches(t *testing.T) {
	t.Parallel()
	const fixture = `package v2

import "github.com/jackc/pgx/v5"

func partitionNamesFixture(schema, rel string, old partition) []partition {
	good := partition{name: pgx.Identifier{schema, rel}.Sanitize(), rel: rel} // ok: quoted
	copied := partition{name: old.name}                                     // ok: another partition's
	bad := partition{name: schema + "." + rel}                              // BAD1: built text
	bad.name = rel                                                          // BAD2: assigned a parameter
	p, _ := parsePartition(rel, rel, "", 0)                                 // BAD3: parsePartition given a bare name
	q, _ := parsePartition(pgx.Identifier{rel}.Sanitize(), rel, "", 0)       // ok
	return []partition{good, copied, bad, p, q, named(pgx.Identifier{rel}.Sanitize())}
}

func named(n string) partition { return partition{name: n} } // ok here: its caller is checked

func partitionNamesCaller() partition { return named("x; drop table t") } // BAD4: a constant that is no quoted name
`
	findings, _ := checkPartitionNames(t, map[string]string{"internal/v2/zz_partition_fixture.go": fixture})
	checkFlagged(t, "zz_partition_fixture.go", fixture, findings)
}

// checkPartitionNames loads the query layer (with overlay files) and
// returns a finding per partition name that is not a quoted identifier in
// the package of type partition (the v2 reader's), and how many stores of a
// name it checked.
func checkPartitionNames(t *testing.T, overlay map[string]string) (findings []string, stores int) {
	t.Helper()
	var pkg *packages.Package
	var tn *types.TypeName
	for _, p := range loadQueryLayer(t, overlay) {
		if n, ok := p.Types.Scope().Lookup("partition").(*types.TypeName); ok {
			pkg, tn = p, n
		}
	}
	if tn == nil {
		t.Fatal("no package of the query layer has a type partition")
	}
	info := pkg.TypesInfo
	st, _ := tn.Type().Underlying().(*types.Struct)
	nameField := -1
	for i := range st.NumFields() {
		if st.Field(i).Name() == "name" {
			nameField = i
		}
	}
	if nameField < 0 {
		t.Fatalf("%s.partition has no field name", pkg.Name)
	}
	isPartition := func(ty types.Type) bool {
		if p, ok := ty.(*types.Pointer); ok {
			ty = p.Elem()
		}
		n, _ := types.Unalias(ty).(*types.Named)
		return n != nil && n.Obj() == tn
	}
	isNameField := func(e ast.Expr) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "name" {
			return false
		}
		s := info.Selections[sel]
		return s != nil && s.Kind() == types.FieldVal && isPartition(s.Recv())
	}
	// The functions of the package's code, and the calls of each.
	type site struct {
		fd   *ast.FuncDecl
		call *ast.CallExpr
	}
	calls := map[*types.Func][]site{}
	var code []*ast.FuncDecl
	for _, f := range pkg.Syntax {
		if strings.HasSuffix(pkg.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				code = append(code, fd)
			}
		}
	}
	for _, fd := range code {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if fn := calleeOf(info, call); fn != nil {
					calls[fn] = append(calls[fn], site{fd, call})
				}
			}
			return true
		})
	}
	report := func(e ast.Expr, why string) {
		pos := pkg.Fset.Position(e.Pos())
		findings = append(findings, fmt.Sprintf("%s:%d: a partition name that is not a quoted identifier (pgx.Identifier{...}.Sanitize()): %s%s",
			filepath.Base(pos.Filename), pos.Line, types.ExprString(e), why))
	}
	// paramOK[v]: parameter v is quoted at every call (true while being
	// decided: a cycle adds nothing unquoted).
	paramOK := map[*types.Var]bool{}
	// quoted reports whether e, in fd, is a quoted name, reporting what is
	// not where it is written (at a call, for a parameter's argument).
	var quoted func(fd *ast.FuncDecl, e ast.Expr) bool
	quoted = func(fd *ast.FuncDecl, e ast.Expr) bool {
		e = ast.Unparen(e)
		if call, ok := e.(*ast.CallExpr); ok {
			if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Sanitize" && len(call.Args) == 0 {
				if n, ok := types.Unalias(info.TypeOf(sel.X)).(*types.Named); ok && n.Obj().Pkg() != nil &&
					n.Obj().Pkg().Path() == "github.com/jackc/pgx/v5" && n.Obj().Name() == "Identifier" {
					return true
				}
			}
		}
		if isNameField(e) {
			return true // another partition's name, checked where it was stored
		}
		if id, ok := e.(*ast.Ident); ok && fd.Type.Params != nil {
			v, _ := info.Uses[id].(*types.Var)
			k := 0
			for _, field := range fd.Type.Params.List {
				for _, n := range field.Names {
					if v == nil || info.Defs[n] != v {
						k++
						continue
					}
					fn, _ := info.Defs[fd.Name].(*types.Func)
					sites := calls[fn]
					ok, decided := paramOK[v]
					if !decided {
						paramOK[v] = true
						ok = len(sites) > 0
						for _, s := range sites {
							if k >= len(s.call.Args) || !quoted(s.fd, s.call.Args[k]) {
								ok = false
							}
						}
						paramOK[v] = ok
					}
					if !ok && len(sites) == 0 {
						report(e, " (a parameter of a function no code of its package calls)")
					}
					return ok
				}
			}
		}
		report(e, "")
		return false
	}
	for _, fd := range code {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit:
				if !isPartition(info.TypeOf(x)) {
					return true
				}
				for i, el := range x.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "name" {
							stores++
							quoted(fd, kv.Value)
						}
					} else if i == nameField {
						stores++
						quoted(fd, el)
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range x.Lhs {
					if isNameField(lhs) && len(x.Rhs) == len(x.Lhs) {
						stores++
						quoted(fd, x.Rhs[i])
					}
				}
			}
			return true
		})
	}
	sort.Strings(findings)
	return findings, stores
}

func TestSQLSafety(t *testing.T) {
	t.Parallel()
	findings, checked := checkSQLSafety(t, nil)
	for _, f := range findings {
		t.Error(f)
	}
	// The query layer has dozens of such calls: far fewer means the check
	// no longer sees them (a renamed package, a new query builder).
	if checked < 20 {
		t.Errorf("only %d SQL text arguments found in the query layer (mirrorql/db/...)", checked)
	}
	t.Logf("%d SQL text arguments checked in the query layer (mirrorql/db/...), %d not SQL-safe", checked, len(findings))
}

// TestSQLSafetyCatches proves the check flags string-built SQL: a file added
// to package db (as an overlay, never on disk) with known-bad and known-good
// calls, the executor db hands its readers (driver.Exec) among them.
func TestSQLSafetyCatches(t *testing.T) {
	t.Parallel()
	const fixture = `package db

import (
	"context"
	"fmt"
	"strconv"

	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

const okColumn = "topic_id"

func sqlSafetyFixture(ctx context.Context, d *DB, name string, n int, op model.Operator, o model.Order) {
	q := d.bun.NewSelect().TableExpr("topic_message")
	q = q.Where("topic_id = ?", n)                           // ok: bind argument
	q = q.Where(okColumn+" "+driver.Comparison(op)+" ?", n)   // ok: constant and operator
	q = q.OrderExpr(driver.Prefixed("m.", okColumn) + " " + driver.Direction(o)) // ok: helpers on constants
	col := "sequence_number"
	if n > 0 {
		col = "consensus_timestamp"
	}
	q = q.Where(col+" > ?", n)                                // ok: local variable, constant assignments
	q = q.Where("memo = '" + name + "'")                      // BAD1: parameter concatenated
	q = q.Where(fmt.Sprintf("id = %d", n))                    // BAD2: formatted
	q = q.OrderExpr("id " + strconv.Itoa(n))                  // BAD3: converted value
	tainted := "id"
	tainted = name
	q = q.Where(tainted + " = 1")                             // BAD4: variable assigned a parameter
	q = q.OrderExpr(driver.Prefixed(name, okColumn))          // BAD5: helper given a parameter
	_, _ = d.bun.ExecContext(ctx, "select "+name)             // BAD6: raw exec
	_ = d.bun.NewRaw("select 1 where x = '" + name + "'")     // BAD7: raw query
	col2, _ := fixtureColumn(n)
	q = q.OrderExpr(col2 + " " + fixtureDirection(n))         // ok: helpers that return constants
	q = q.OrderExpr(fixtureTainted(name))                     // BAD8: helper that returns its parameter
	_, col3 := fixtureBoth(name)
	q = q.OrderExpr(col3)                                     // BAD9: tuple result that is a parameter
	_ = d.query(ctx, nil, "SELECT 1 FROM topic_message WHERE topic_id = $1", n) // ok: a fixed statement
	_ = d.query(ctx, nil, "SELECT "+name)                       // BAD10: a sink given built text
	var x driver.Exec = d.env
	_ = x.Pipeline(ctx, []driver.Piped{{SQL: "SELECT 1", Args: []any{n}}}) // ok: a fixed piped statement
	_ = x.Pipeline(ctx, []driver.Piped{{SQL: "SELECT " + name}})         // BAD11: a piped statement of built text
	_ = x.Query(ctx, nil, "SELECT 1 WHERE $1", n)                        // ok: a reader's fixed statement
	_ = x.QueryPlanned(ctx, nil, "SELECT "+name)                         // BAD12: a reader's statement of built text
	_, _ = d.env.QueryRows(ctx, "SELECT "+name)                          // BAD13: the catalog's, built
	_ = q
}

func fixtureColumn(n int) (string, int) {
	if n > 0 {
		return "sequence_number", n
	}
	return okColumn, 0
}

func fixtureDirection(n int) string {
	if n > 0 {
		return "DESC"
	}
	return "ASC"
}

func fixtureTainted(s string) string { return "x." + s }

func fixtureBoth(s string) (int, string) { return 1, s }
`
	findings, _ := checkSQLSafety(t, map[string]string{"zz_sqlsafety_fixture.go": fixture})
	checkFlagged(t, "zz_sqlsafety_fixture.go", fixture, findings)
}

// checkFlagged fails unless findings ("file:line: …") are in file alone, and
// flag exactly the lines of fixture (file's text) marked "// BAD<n>".
func checkFlagged(t *testing.T, file, fixture string, findings []string) {
	t.Helper()
	lines := strings.Split(fixture, "\n")
	want := map[int]string{}
	for i, l := range lines {
		if j := strings.Index(l, "// BAD"); j >= 0 {
			want[i+1] = strings.Fields(l[j+3:])[0]
		}
	}
	flagged := map[int]bool{}
	for _, f := range findings {
		name, rest, _ := strings.Cut(f, ":")
		if name != file {
			t.Errorf("unexpected finding outside the fixture: %s", f)
			continue
		}
		var line int
		if _, err := fmt.Sscanf(rest, "%d", &line); err != nil {
			t.Fatalf("cannot read the line of %q", f)
		}
		if _, ok := want[line]; !ok {
			t.Errorf("flagged a safe line %d (%s): %s", line, strings.TrimSpace(lines[line-1]), f)
		}
		flagged[line] = true
	}
	for line, name := range want {
		if !flagged[line] {
			t.Errorf("%s (line %d) not flagged: %s", name, line, strings.TrimSpace(lines[line-1]))
		}
	}
}

// checkSQLSafety loads the query layer (package mirrorql/db and those under
// it, plus overlay files, by path from db's directory) and returns one
// finding per unsafe SQL argument, and how many SQL arguments it checked.
func checkSQLSafety(t *testing.T, overlay map[string]string) ([]string, int) {
	t.Helper()
	pkgs := loadQueryLayer(t, overlay)
	c := &sqlChecker{fset: pkgs[0].Fset, ours: map[*types.Package]*packages.Package{}, funcs: map[*types.Func]*ast.FuncDecl{},
		infos: map[*ast.FuncDecl]*types.Info{}, results: map[string]bool{}}
	for _, pkg := range pkgs {
		c.ours[pkg.Types] = pkg
		for _, f := range pkg.Syntax {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					if fn, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func); ok {
						c.funcs[fn] = fd
					}
					c.infos[fd] = pkg.TypesInfo
				}
			}
		}
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Syntax {
			name := pkg.Fset.File(f.Pos()).Name()
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						c.checkCall(fd, call)
					}
					if lit, ok := n.(*ast.CompositeLit); ok {
						c.checkPiped(fd, lit)
					}
					return true
				})
			}
		}
	}
	sort.Strings(c.findings)
	return c.findings, c.checked
}

// loadQueryLayer loads package mirrorql/db and the packages under it
// (db/internal/...) with their syntax and types, in one file set, plus
// overlay files (by path from db's directory). db comes first.
func loadQueryLayer(t *testing.T, overlay map[string]string) []*packages.Package {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(repoRoot, "db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:     dir,
		Overlay: map[string][]byte{},
	}
	for name, src := range overlay {
		cfg.Overlay[filepath.Join(dir, name)] = []byte(src)
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	// db, its readers' packages (driver, v1, v2): fewer means the check no
	// longer sees the layout packages.
	if len(pkgs) < 4 {
		t.Fatalf("loaded %d packages, want mirrorql/db and the packages under it", len(pkgs))
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].PkgPath < pkgs[j].PkgPath })
	if pkgs[0].PkgPath != "mirrorql/db" {
		t.Fatalf("loaded %s first, want mirrorql/db", pkgs[0].PkgPath)
	}
	return pkgs
}

type sqlChecker struct {
	fset     *token.FileSet
	ours     map[*types.Package]*packages.Package // the query layer's packages
	funcs    map[*types.Func]*ast.FuncDecl
	infos    map[*ast.FuncDecl]*types.Info // each function's package's
	findings []string
	checked  int
	results  map[string]bool // resultSafe's answers
}

// own: p is one of the query layer's packages.
func (c *sqlChecker) own(p *types.Package) bool { return p != nil && c.ours[p] != nil }

// checkCall checks the string arguments of a call into an SQL package.
func (c *sqlChecker) checkCall(fd *ast.FuncDecl, call *ast.CallExpr) {
	fn := c.callee(fd, call)
	if fn == nil || fn.Pkg() == nil || notSQL[fn.Pkg().Path()+"."+fn.Name()] {
		return
	}
	if !sqlPackages[fn.Pkg().Path()] && !(c.own(fn.Pkg()) && sqlSinks[fn.Name()]) {
		return
	}
	sig := fn.Type().(*types.Signature)
	params := sig.Params()
	for i, arg := range call.Args {
		var pt types.Type
		switch {
		case sig.Variadic() && i >= params.Len()-1:
			pt = params.At(params.Len() - 1).Type().(*types.Slice).Elem()
			if call.Ellipsis.IsValid() {
				pt = params.At(params.Len() - 1).Type()
			}
		case i < params.Len():
			pt = params.At(i).Type()
		}
		if b, ok := pt.(*types.Basic); !ok || b.Kind() != types.String {
			continue
		}
		c.checked++
		if !c.safe(fd, arg, map[types.Object]bool{}) {
			pos := c.fset.Position(arg.Pos())
			c.findings = append(c.findings, fmt.Sprintf("%s:%d: SQL text built from a value that is not SQL-safe in %s(...): %s",
				filepath.Base(pos.Filename), pos.Line, fn.Name(), c.source(arg)))
		}
	}
}

// checkPiped checks the SQL of a piped statement literal (rule 8).
func (c *sqlChecker) checkPiped(fd *ast.FuncDecl, lit *ast.CompositeLit) {
	if !c.isPiped(c.infos[fd].TypeOf(lit)) {
		return
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if key, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || key.Name != "SQL" {
			continue
		}
		c.checked++
		if !c.safe(fd, kv.Value, map[types.Object]bool{}) {
			pos := c.fset.Position(kv.Value.Pos())
			c.findings = append(c.findings, fmt.Sprintf("%s:%d: SQL text built from a value that is not SQL-safe in driver.Piped{SQL: ...}: %s",
				filepath.Base(pos.Filename), pos.Line, c.source(kv.Value)))
		}
	}
}

// isPiped: t is the query layer's piped statement (driver.Piped).
func (c *sqlChecker) isPiped(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, _ := types.Unalias(t).(*types.Named)
	return named != nil && c.own(named.Obj().Pkg()) && named.Obj().Name() == "Piped"
}

// callee is the function or method a call in fd calls, or nil.
func (c *sqlChecker) callee(fd *ast.FuncDecl, call *ast.CallExpr) *types.Func {
	return calleeOf(c.infos[fd], call)
}

// calleeOf is the function or method a call calls, by info, or nil.
func calleeOf(info *types.Info, call *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn
}

// safe applies the rule to expression e inside function fd.
func (c *sqlChecker) safe(fd *ast.FuncDecl, e ast.Expr, seen map[types.Object]bool) bool {
	info := c.infos[fd]
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true // rule 1
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return c.safe(fd, x.X, seen)
	case *ast.SelectorExpr:
		return x.Sel.Name == "SQL" && c.isPiped(info.TypeOf(x.X)) // rule 8
	case *ast.BinaryExpr:
		return x.Op == token.ADD && c.safe(fd, x.X, seen) && c.safe(fd, x.Y, seen) // rule 5
	case *ast.CallExpr:
		fn := c.callee(fd, x)
		if fn == nil {
			return false
		}
		sig := fn.Type().(*types.Signature)
		if recv := sig.Recv(); recv != nil && len(x.Args) == 0 {
			named, _ := types.Unalias(recv.Type()).(*types.Named)
			if named != nil && named.Obj().Pkg() != nil {
				switch {
				case fn.Name() == "Sanitize" && named.Obj().Pkg().Path() == "github.com/jackc/pgx/v5" && named.Obj().Name() == "Identifier":
					return true // rule 4
				}
			}
			if named == nil || !c.own(named.Obj().Pkg()) {
				return false
			}
			return c.resultSafe(fn, 0) // rule 3, a method of the query layer's own
		}
		if c.own(fn.Pkg()) && sig.Recv() == nil && sqlHelpers[fn.Name()] { // rule 3, listed helpers
			for i, a := range x.Args {
				if i < sig.Params().Len() {
					if b, ok := sig.Params().At(i).Type().(*types.Basic); ok && b.Kind() == types.String && !c.safe(fd, a, seen) {
						return false
					}
				}
			}
			return true
		}
		return c.resultSafe(fn, 0) // rule 3
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if ok && sqlSinks[fd.Name.Name] && isParam(fd, v, info) {
			return true // rule 7: checked at every call site
		}
		if !ok || v.IsField() || v.Parent() == nil || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() || !within(fd, v.Pos()) || isParam(fd, v, info) {
			return false // only function-local variables (rule 6)
		}
		if seen[v] {
			return true // a cycle adds nothing unsafe
		}
		seen[v] = true
		return c.assignmentsSafe(fd, v, seen)
	}
	return false
}

// resultSafe reports whether result i of fn, a function or method of the
// query layer's own, is SQL-safe in every return statement of its body
// (rule 3). Recursion counts as unsafe.
func (c *sqlChecker) resultSafe(fn *types.Func, i int) bool {
	if fn == nil || !c.own(fn.Pkg()) {
		return false
	}
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil && types.IsInterface(recv.Type()) {
		return c.implementationsSafe(fn, i)
	}
	fd := c.funcs[fn]
	if fd == nil || fd.Body == nil {
		return false
	}
	key := fmt.Sprintf("%p/%d", fn, i)
	if v, done := c.results[key]; done {
		return v
	}
	c.results[key] = false // while being decided: recursion is unsafe
	ok, n := true, 0
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		switch r := node.(type) {
		case *ast.FuncLit:
			return false // its returns are its own
		case *ast.ReturnStmt:
			n++
			switch nres := fn.Type().(*types.Signature).Results().Len(); {
			case len(r.Results) == nres && i < nres:
				ok = ok && c.safe(fd, r.Results[i], map[types.Object]bool{})
			case len(r.Results) == 1 && nres > 1: // return g(), g with as many results
				call, isCall := ast.Unparen(r.Results[0]).(*ast.CallExpr)
				ok = ok && isCall && c.resultSafe(c.callee(fd, call), i)
			default:
				ok = false // a naked return of named results
			}
		}
		return true
	})
	c.results[key] = ok && n > 0
	return ok && n > 0
}

// implementationsSafe reports whether result i of the interface method fn
// is SQL-safe in the method of every type of the query layer's packages
// that implements the interface (and there is at least one).
func (c *sqlChecker) implementationsSafe(fn *types.Func, i int) bool {
	iface, _ := fn.Type().(*types.Signature).Recv().Type().Underlying().(*types.Interface)
	n := 0
	for p := range c.ours {
		scope := p.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || types.IsInterface(tn.Type()) || iface == nil {
				continue
			}
			for _, t := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
				if !types.Implements(t, iface) {
					continue
				}
				obj, _, _ := types.LookupFieldOrMethod(t, true, p, fn.Name())
				m, _ := obj.(*types.Func)
				if !c.resultSafe(m, i) {
					return false
				}
				n++
				break
			}
		}
	}
	return n > 0
}

// assignmentsSafe reports whether every assignment to the local variable v
// in fd is SQL-safe (and there is at least one).
func (c *sqlChecker) assignmentsSafe(fd *ast.FuncDecl, v *types.Var, seen map[types.Object]bool) bool {
	ok, n := true, 0
	info := c.infos[fd]
	is := func(e ast.Expr) bool {
		id, isID := ast.Unparen(e).(*ast.Ident)
		return isID && (info.Defs[id] == v || info.Uses[id] == v)
	}
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		switch s := node.(type) {
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				if !is(lhs) {
					continue
				}
				n++
				if s.Tok != token.ASSIGN && s.Tok != token.DEFINE && s.Tok != token.ADD_ASSIGN {
					ok = false
					continue
				}
				if len(s.Rhs) == 1 && len(s.Lhs) > 1 { // q, col := f.page(q)
					call, isCall := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
					if !isCall || !c.resultSafe(c.callee(fd, call), i) {
						ok = false
					}
					continue
				}
				if len(s.Rhs) != len(s.Lhs) || !c.safe(fd, s.Rhs[i], seen) {
					ok = false
				}
			}
		case *ast.ValueSpec:
			for i, name := range s.Names {
				if info.Defs[name] != v {
					continue
				}
				n++
				if len(s.Values) != len(s.Names) || !c.safe(fd, s.Values[i], seen) {
					ok = false
				}
			}
		case *ast.UnaryExpr:
			if s.Op == token.AND && is(s.X) {
				ok = false // its address escapes: anything may write it
			}
		case *ast.RangeStmt:
			if (s.Key != nil && is(s.Key)) || (s.Value != nil && is(s.Value)) {
				ok = false
			}
		}
		return true
	})
	return ok && n > 0
}

func within(fd *ast.FuncDecl, p token.Pos) bool { return fd.Body.Pos() <= p && p <= fd.Body.End() }

func isParam(fd *ast.FuncDecl, v *types.Var, info *types.Info) bool {
	for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params, fd.Type.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				if info.Defs[n] == v {
					return true
				}
			}
		}
	}
	return false
}

func (c *sqlChecker) source(e ast.Expr) string {
	s := types.ExprString(e)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}
