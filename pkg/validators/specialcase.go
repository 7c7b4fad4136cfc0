package validators

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/unidiff"
)

// testLiteral is a value the failing test spells out: an input it passes or
// a result it expects.
type testLiteral struct {
	test  string // the test function
	where string // file:line in the test
}

// failingTestLiterals collects the literals of the failing tests' functions,
// and of the package-level variables and constants of their test files that
// those functions use (the tables of table-driven tests). Values too common
// to tell anything (0, ±1, 2, "", one-character strings, booleans) are left
// out.
func failingTestLiterals(dir string, ids []string) map[string]testLiteral {
	lits := map[string]testLiteral{}
	for _, id := range ids {
		t, err := golang.Resolve(dir, id)
		if err != nil {
			continue
		}
		pkgDir := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(t.Dir, "./")))
		fset := token.NewFileSet()
		files := parseTestFiles(fset, pkgDir)
		// Package-level declarations of the test files, by name.
		globals := map[string]ast.Node{}
		for _, f := range files {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && (g.Tok == token.VAR || g.Tok == token.CONST) {
					for _, s := range g.Specs {
						if vs, ok := s.(*ast.ValueSpec); ok {
							for _, n := range vs.Names {
								globals[n.Name] = vs
							}
						}
					}
				}
			}
		}
		for _, f := range files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Name.Name != t.Func() || fn.Body == nil {
					continue
				}
				collect := func(n ast.Node) {
					ast.Inspect(n, func(n ast.Node) bool {
						if v, ok := literalValue(n); ok {
							if _, seen := lits[v]; !seen {
								p := fset.Position(n.Pos())
								lits[v] = testLiteral{test: fn.Name.Name, where: fmt.Sprintf("%s:%d", relTo(dir, p.Filename), p.Line)}
							}
							return false
						}
						return true
					})
				}
				collect(fn.Body)
				used := map[string]bool{}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && globals[id.Name] != nil && !used[id.Name] {
						used[id.Name] = true
						collect(globals[id.Name])
					}
					return true
				})
			}
		}
	}
	return lits
}

func parseTestFiles(fset *token.FileSet, pkgDir string) []*ast.File {
	var files []*ast.File
	for _, src := range goSources(pkgDir, ".", func(name string) bool { return strings.HasSuffix(name, "_test.go") }) {
		f, err := parser.ParseFile(fset, filepath.Join(pkgDir, src.name), src.data, parser.SkipObjectResolution)
		if err == nil {
			files = append(files, f)
		}
	}
	return files
}

// maxSourceBytes bounds a Go file the gates read from the checkout; a
// larger one is passed over.
const maxSourceBytes = 4 << 20

type goSource struct {
	name string
	data []byte
}

// goSources reads the Go files of the directory rel under dir that keep
// returns true for, beneath dir, through no link, each at most
// maxSourceBytes.
func goSources(dir, rel string, keep func(name string) bool) []goSource {
	names, err := listFiles(dir, rel)
	if err != nil {
		return nil
	}
	var out []goSource
	for _, n := range names {
		if !strings.HasSuffix(n, ".go") || !keep(n) {
			continue
		}
		data, err := readBeneath(dir, path.Join(filepath.ToSlash(rel), n), maxSourceBytes)
		if err == nil {
			out = append(out, goSource{n, data})
		}
	}
	return out
}

// literalValue is the canonical value of a literal (a basic literal, or a
// negated number), when it is distinctive enough to count.
func literalValue(n ast.Node) (string, bool) {
	neg := false
	if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, n = true, u.X
	}
	lit, ok := n.(*ast.BasicLit)
	if !ok {
		return "", false
	}
	switch lit.Kind {
	case token.STRING:
		s, err := strconv.Unquote(lit.Value)
		if err != nil || neg || len([]rune(strings.TrimSpace(s))) < 2 {
			return "", false
		}
		return "string:" + s, true
	case token.INT, token.FLOAT:
		v := constant.MakeFromLiteral(lit.Value, lit.Kind, 0)
		if v.Kind() == constant.Unknown {
			return "", false
		}
		if neg {
			v = constant.UnaryOp(token.SUB, v, 0)
		}
		if f, _ := constant.Float64Val(constant.ToFloat(v)); f >= -2 && f <= 2 {
			return "", false
		}
		return "number:" + constant.ToFloat(v).ExactString(), true
	}
	return "", false
}

// showLiteral writes a canonical value back as Go.
func showLiteral(v string) string {
	if s, ok := strings.CutPrefix(v, "string:"); ok {
		return strconv.Quote(s)
	}
	return strings.TrimPrefix(v, "number:")
}

// specialCases finds the conditions the patch adds, in non-test Go files,
// that compare a value with one of the failing test's literals which the
// package's code did not know before the patch: `if a == 150`, `case
// "2024-02-30":`, `strings.HasPrefix(s, "weird input")`.
func specialCases(dir string, files []unidiff.File, lits map[string]testLiteral) []string {
	if len(lits) == 0 {
		return nil
	}
	// The lines each file gained.
	addedIn := map[string]map[int]bool{}
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		m := map[int]bool{}
		for _, l := range f.Changes() {
			if l.Added() {
				m[l.NewLine] = true
			}
		}
		addedIn[f.NewPath] = m
	}
	var bad []string
	known := map[string]map[string]bool{} // package dir -> literals of its code outside the added lines
	for _, f := range files {
		p := f.NewPath
		if p == "" || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || isTestData(p) {
			continue
		}
		added := addedIn[p]
		if len(added) == 0 {
			continue
		}
		fset := token.NewFileSet()
		src, err := readBeneath(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(p)), src, parser.SkipObjectResolution)
		if err != nil {
			continue // the static gate reports code that does not parse
		}
		pkg := path.Dir(p)
		if known[pkg] == nil {
			known[pkg] = packageLiterals(dir, pkg, addedIn)
		}
		report := func(at ast.Node, lit ast.Node, what string) {
			v, ok := literalValue(lit)
			if !ok {
				return
			}
			tl, inTest := lits[v]
			line := fset.Position(at.Pos()).Line
			if !inTest || !added[line] || known[pkg][v] {
				return
			}
			bad = append(bad, fmt.Sprintf("%s:%d: special-cases a value of the failing test: %s compares with %s, which %s uses at %s and the code never did before",
				p, line, what, showLiteral(v), tl.test, tl.where))
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					report(n, n.X, exprText(fset, n))
					report(n, n.Y, exprText(fset, n))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					report(e, e, "case "+exprText(fset, e))
				}
			case *ast.CallExpr:
				if name := exprText(fset, n.Fun); comparingCall[name] {
					for _, a := range n.Args {
						report(n, a, exprText(fset, n))
					}
				}
			}
			return true
		})
	}
	sort.Strings(bad)
	return dedupStrings(bad)
}

// comparingCall are calls that compare their arguments.
var comparingCall = map[string]bool{
	"strings.EqualFold": true, "strings.HasPrefix": true, "strings.HasSuffix": true, "strings.Contains": true,
	"bytes.Equal": true, "bytes.HasPrefix": true, "bytes.HasSuffix": true, "bytes.Contains": true,
	"reflect.DeepEqual": true, "slices.Equal": true, "slices.Contains": true,
}

// packageLiterals are the literal values in the package's non-test files,
// outside the lines the patch added: what the code knew before.
func packageLiterals(dir, pkg string, addedIn map[string]map[int]bool) map[string]bool {
	out := map[string]bool{}
	pkgDir := filepath.Join(dir, filepath.FromSlash(pkg))
	fset := token.NewFileSet()
	for _, src := range goSources(dir, pkg, func(name string) bool { return !strings.HasSuffix(name, "_test.go") }) {
		f, err := parser.ParseFile(fset, filepath.Join(pkgDir, src.name), src.data, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		added := addedIn[path.Join(pkg, src.name)]
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := literalValue(n); ok {
				if !added[fset.Position(n.Pos()).Line] {
					out[v] = true
				}
				return false
			}
			return true
		})
	}
	return out
}

func exprText(fset *token.FileSet, n ast.Node) string {
	var b strings.Builder
	if err := printer.Fprint(&b, fset, n); err != nil {
		return "?"
	}
	return oneLineText(b.String(), 120)
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func oneLineText(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func dedupStrings(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
