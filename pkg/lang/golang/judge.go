package golang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/quote"
	"github.com/redfix/redfix/pkg/untrusted"
)

// The judge's context in Go (pkg/judge asks for it as capabilities): a
// failing test's function with the package-level tables it uses and the
// data files its strings name, and the top-level declarations a change
// touches, read with go/ast.

// QuoteTest quotes the test id of the module at dir: its function (with
// its doc comment), the package-level variables and constants of the test
// files it uses, then the data files its strings name.
func (Driver) QuoteTest(dir, id string) []quote.Source {
	t, err := Resolve(dir, id)
	if err != nil {
		return nil
	}
	pkgRel := filepath.FromSlash(strings.TrimPrefix(t.Dir, "./"))
	files := parseQuoted(dir, pkgRel)
	globals := map[string]ast.Node{}
	for _, p := range files {
		for _, d := range p.f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && (g.Tok == token.VAR || g.Tok == token.CONST) {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						globals[n.Name] = g
					}
				}
			}
		}
	}
	var out []quote.Source
	for _, p := range files {
		for _, d := range p.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != t.Func() || fn.Body == nil {
				continue
			}
			text, lits := quoteFunc(p, fn, files, globals)
			line := p.fset.Position(fn.Pos()).Line
			name := t.Func() + " (" + filepath.ToSlash(filepath.Join(pkgRel, p.name)) + ":" + strconv.Itoa(line) + ")"
			out = append(out, quote.Source{Name: name, Text: quote.Lines(text, quote.MaxTest, t.Func())})
			out = append(out, quote.DataFiles(dir, filepath.ToSlash(pkgRel), lits)...)
		}
	}
	return out
}

// quoted is a test file parsed for a quote.
type quoted struct {
	f    *ast.File
	fset *token.FileSet
	src  []byte
	name string
}

// text is n's source with its doc comment.
func (p quoted) text(n ast.Node) string {
	start, end := p.fset.Position(n.Pos()).Offset, p.fset.Position(n.End()).Offset
	if fd, ok := n.(*ast.FuncDecl); ok && fd.Doc != nil {
		start = p.fset.Position(fd.Doc.Pos()).Offset
	}
	if g, ok := n.(*ast.GenDecl); ok && g.Doc != nil {
		start = p.fset.Position(g.Doc.Pos()).Offset
	}
	if start < 0 || end > len(p.src) || start > end {
		return ""
	}
	return string(p.src[start:end])
}

// parseQuoted parses the _test.go files of the package in the directory
// rel, read as untrusted: tests ran in the checkout.
func parseQuoted(dir, rel string) []quoted {
	ents, err := untrusted.ReadDir(dir, rel)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	var files []quoted
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := untrusted.ReadFile(dir, filepath.Join(rel, e.Name()), quote.MaxSourceFile)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		files = append(files, quoted{f, fset, src, e.Name()})
	}
	return files
}

// quoteFunc is fn's source (of the file p) followed by the package-level
// declarations it uses, from whichever test file declares them, and the
// strings all of them hold.
func quoteFunc(p quoted, fn *ast.FuncDecl, files []quoted, globals map[string]ast.Node) (string, []string) {
	var b strings.Builder
	b.WriteString(p.text(fn))
	used := map[ast.Node]bool{}
	var lits []string
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if g := globals[n.Name]; g != nil {
				used[g] = true
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				lits = append(lits, s)
			}
		}
		return true
	})
	for _, q := range files {
		for _, d := range q.f.Decls {
			if !used[d] {
				continue
			}
			b.WriteString("\n\n")
			b.WriteString(q.text(d))
			ast.Inspect(d, func(n ast.Node) bool {
				if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					if s, err := strconv.Unquote(bl.Value); err == nil {
						lits = append(lits, s)
					}
				}
				return true
			})
		}
	}
	return b.String(), lits
}

// DeclarationsAt are the top-level declarations of src that hold one of
// lines, by name ("func (r *Repo) Parse", "var defaults").
func (Driver) DeclarationsAt(_, src string, lines map[int]bool) map[string]string {
	out := map[string]string{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return out
	}
	for _, d := range f.Decls {
		start, end := fset.Position(d.Pos()).Line, fset.Position(d.End()).Line
		hit := false
		for l := range lines {
			if l >= start && l <= end {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		off, endOff := fset.Position(d.Pos()).Offset, fset.Position(d.End()).Offset
		out[declName(d)] = src[off:endOff]
	}
	return out
}

func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			var b strings.Builder
			recv := d.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				b.WriteString("*")
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				b.WriteString(id.Name)
			} else if ix, ok := recv.(*ast.IndexExpr); ok {
				if id, ok := ix.X.(*ast.Ident); ok {
					b.WriteString(id.Name)
				}
			}
			return "func (" + b.String() + ") " + d.Name.Name
		}
		return "func " + d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		return d.Tok.String() + " " + strings.Join(names, ", ")
	}
	return "declaration"
}
