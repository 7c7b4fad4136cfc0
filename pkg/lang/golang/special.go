package golang

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing in Go: the literals of the failing tests' functions and
// of the package-level tables of their test files that they use, and the
// conditions a patch adds to non-test Go files that compare a value with
// one of them which the package's code did not know before the patch
// (gaterules.SpecialCases): `if a == 150`, `case "2024-02-30":`,
// `strings.HasPrefix(s, "weird input")`.

// SpecialCases names the comparisons with a failing test's literal the
// patch adds to the package's code.
func (d Driver) SpecialCases(dir string, patch []unidiff.File, failing []string, _ func(string) bool) []string {
	isCode := func(p string) bool { return isNonTestGo(p) }
	return gaterules.SpecialCases(dir, patch, isCode, failingTestLiterals(dir, failing), gaterules.Code{
		Comparisons: comparisons,
		Literals: func(p string, src []byte, add func(string, int)) bool {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
			if err != nil {
				return false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if v, ok := literalValue(n); ok {
					add(v, fset.Position(n.Pos()).Line)
					return false
				}
				return true
			})
			return true
		},
	})
}

// failingTestLiterals collects the literals of the failing tests'
// functions, and of the package-level variables and constants of their
// test files that those functions use (the tables of table-driven tests).
// Values too common to tell anything (0, ±1, 2, "", one-character
// strings, booleans) are left out.
func failingTestLiterals(dir string, ids []string) map[string]gaterules.Literal {
	lits := map[string]gaterules.Literal{}
	for _, id := range ids {
		t, err := Resolve(dir, id)
		if err != nil {
			continue
		}
		fset := token.NewFileSet()
		files := parseTestFiles(fset, dir, strings.TrimPrefix(t.Dir, "./"))
		globals := packageGlobals(files)
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
								lits[v] = gaterules.Literal{Test: fn.Name.Name, Where: fmt.Sprintf("%s:%d", p.Filename, p.Line)}
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

// packageGlobals are the package-level variables and constants of the
// files, by name.
func packageGlobals(files []*ast.File) map[string]ast.Node {
	globals := map[string]ast.Node{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR && g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						globals[n.Name] = vs
					}
				}
			}
		}
	}
	return globals
}

// parseTestFiles parses the _test.go files of the package in the
// directory pkg under dir; their positions name them by their path in the
// checkout.
func parseTestFiles(fset *token.FileSet, dir, pkg string) []*ast.File {
	names, err := gaterules.ListFiles(dir, pkg)
	if err != nil {
		return nil
	}
	var files []*ast.File
	for _, n := range names {
		if !strings.HasSuffix(n, "_test.go") {
			continue
		}
		rel := path.Join(filepath.ToSlash(pkg), n)
		src, err := gaterules.Read(dir, rel)
		if err != nil {
			continue
		}
		if f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// literalValue is the canonical value of a literal (gaterules.Literal's:
// a basic literal, or a negated number), when it is distinctive enough to
// count.
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

// comparingCall are calls that compare their arguments.
var comparingCall = map[string]bool{
	"strings.EqualFold": true, "strings.HasPrefix": true, "strings.HasSuffix": true, "strings.Contains": true,
	"bytes.Equal": true, "bytes.HasPrefix": true, "bytes.HasSuffix": true, "bytes.Contains": true,
	"reflect.DeepEqual": true, "slices.Equal": true, "slices.Contains": true,
}

// comparisons are the comparisons of a Go file with literals: == and !=,
// switch cases, and the comparing calls.
func comparisons(p string, src []byte) ([]gaterules.Comparison, bool) {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false // the static gate reports code that does not parse
	}
	var out []gaterules.Comparison
	report := func(at, lit ast.Node, what string) {
		if v, ok := literalValue(lit); ok {
			out = append(out, gaterules.Comparison{Line: fset.Position(at.Pos()).Line, What: what, Verb: "compares with", Value: v})
		}
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
	return out, true
}

func exprText(fset *token.FileSet, n ast.Node) string {
	var b strings.Builder
	if err := printer.Fprint(&b, fset, n); err != nil {
		return "?"
	}
	return gaterules.OneLine(b.String(), 120)
}
