package judge

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Source is a piece of the repository the judge reads: a failing test's
// function, or a file it compares with.
type Source struct {
	Name string `json:"name"` // what it is: "TestParse (parse_test.go:12)", "testdata/want.golden"
	Text string `json:"text"`
}

// Change is one changed function (or file region) before and after the
// patch.
type Change struct {
	Where  string `json:"where"` // "parse.go: func Parse"
	Before string `json:"before"`
	After  string `json:"after"`
}

// Caps on the context read from a checkout, in bytes.
const (
	maxTestSource = 6000
	maxDataFile   = 2000
	maxDataFiles  = 3
	maxChange     = 4000
	maxChanges    = 6
	// maxSourceFile and maxDataRead bound a file read at all (what is
	// shown of it is capped above).
	maxSourceFile = 4 << 20
	maxDataRead   = 1 << 20
)

// WithContext fills in.Tests and in.Code from dir, a checkout with the
// patch applied: the failing tests' functions (with the package-level
// tables they use and the test data files they name), and each changed
// function before and after the patch. What cannot be read is left out.
func WithContext(dir string, in Input) Input {
	if len(in.Tests) == 0 {
		for _, id := range in.Task.Tests() {
			in.Tests = append(in.Tests, testSources(dir, id)...)
		}
	}
	if len(in.Code) == 0 {
		if files, err := unidiff.Parse(in.Patch); err == nil {
			in.Code = changes(dir, files, nil)
		}
	}
	return in
}

// testSources reads the test id's function from the module at dir.
func testSources(dir, id string) []Source {
	t, err := golang.Resolve(dir, id)
	if err != nil {
		return nil
	}
	pkgRel := filepath.FromSlash(strings.TrimPrefix(t.Dir, "./"))
	pkgDir := filepath.Join(dir, pkgRel)
	// The checkout is read as untrusted: tests ran in it.
	ents, err := untrusted.ReadDir(dir, pkgRel)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	type parsed struct {
		f    *ast.File
		src  []byte
		name string
	}
	var files []parsed
	globals := map[string]ast.Node{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := untrusted.ReadFile(dir, filepath.Join(pkgRel, e.Name()), maxSourceFile)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		files = append(files, parsed{f, src, e.Name()})
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && (g.Tok == token.VAR || g.Tok == token.CONST) {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						globals[n.Name] = g
					}
				}
			}
		}
	}
	text := func(p parsed, n ast.Node) string {
		start, end := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
		if fd, ok := n.(*ast.FuncDecl); ok && fd.Doc != nil {
			start = fset.Position(fd.Doc.Pos()).Offset
		}
		if g, ok := n.(*ast.GenDecl); ok && g.Doc != nil {
			start = fset.Position(g.Doc.Pos()).Offset
		}
		if start < 0 || end > len(p.src) || start > end {
			return ""
		}
		return string(p.src[start:end])
	}
	var out []Source
	for _, p := range files {
		for _, d := range p.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != t.Func() || fn.Body == nil {
				continue
			}
			var b strings.Builder
			b.WriteString(text(p, fn))
			used := map[ast.Node]bool{}
			var lits []string
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if g := globals[n.Name]; g != nil && !used[g] {
						used[g] = true
					}
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
						lits = append(lits, s)
					}
				}
				return true
			})
			// The tables it uses, from whichever test file declares them.
			for _, q := range files {
				for _, d := range q.f.Decls {
					if used[d] {
						b.WriteString("\n\n")
						b.WriteString(text(q, d))
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
			}
			line := fset.Position(fn.Pos()).Line
			out = append(out, Source{Name: t.Func() + " (" + relPath(dir, filepath.Join(pkgDir, p.name)) + ":" + strconv.Itoa(line) + ")", Text: capLines(b.String(), maxTestSource, t.Func())})
			out = append(out, dataFiles(dir, pkgDir, lits)...)
		}
	}
	return out
}

// capLines keeps the whole lines of s, the source of name, that fit in max
// bytes, and ends with a line saying how many were left out: a quoted
// source is never cut inside a line, and where it stops is marked, so that
// it cannot be read as running on into what is quoted after it.
func capLines(s string, max int, name string) string {
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], '\n')
	if cut <= 0 {
		return capText(s, max) // its first line alone is longer
	}
	rest := s[cut+1:]
	n := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		n++
	}
	return fmt.Sprintf("%s[… %d more lines of %s not shown; its quoted source ends here …]\n", s[:cut+1], n, name)
}

// dataFiles are the files under the package that the test's string
// literals name (testdata/x.golden, or "x.golden" joined with "testdata").
func dataFiles(root, pkgDir string, lits []string) []Source {
	seen := map[string]bool{}
	var out []Source
	for _, l := range lits {
		if len(out) == maxDataFiles {
			break
		}
		if l == "" || strings.ContainsAny(l, "\n\x00") || len(l) > 200 {
			continue
		}
		for _, cand := range []string{filepath.Join(pkgDir, l), filepath.Join(pkgDir, "testdata", l)} {
			if !strings.HasPrefix(cand, pkgDir+string(filepath.Separator)) {
				continue
			}
			if seen[cand] {
				continue
			}
			// Beneath the checkout, through no link, sized first: a test
			// data file linked to a host file is never shown to the model.
			data, err := untrusted.ReadText(root, untrusted.Rel(root, cand), maxDataRead)
			if err != nil {
				continue
			}
			seen[cand] = true
			out = append(out, Source{Name: relPath(root, cand), Text: capText(string(data), maxDataFile)})
			break
		}
	}
	return out
}

// changes shows each changed function of the patch's Go files before and
// after, and of the files other declares (by path) with its declsAt.
func changes(dir string, files []unidiff.File, other func(path string) declsAt) []Change {
	var out []Change
	for _, f := range files {
		if len(out) >= maxChanges {
			break
		}
		if f.NewPath == "" || f.OldPath == "" || f.Binary {
			continue // created or deleted files are whole in the patch
		}
		after, err := untrusted.ReadText(dir, f.NewPath, maxSourceFile)
		if err != nil {
			continue
		}
		before, ok := unapply(string(after), f.Hunks)
		if !ok {
			continue
		}
		at := funcsAt
		if !strings.HasSuffix(f.NewPath, ".go") {
			if other == nil {
				continue
			}
			if at = other(f.NewPath); at == nil {
				continue
			}
		}
		bf := at(before, oldLines(f))
		af := at(string(after), newLines(f))
		names := map[string]bool{}
		for n := range bf {
			names[n] = true
		}
		for n := range af {
			names[n] = true
		}
		var keys []string
		for n := range names {
			keys = append(keys, n)
		}
		sort.Strings(keys)
		for _, n := range keys {
			if len(out) >= maxChanges {
				break
			}
			b, a := bf[n], af[n]
			if b == "" {
				b = "(not there)"
			}
			if a == "" {
				a = "(removed)"
			}
			out = append(out, Change{Where: f.NewPath + ": " + n, Before: capText(b, maxChange), After: capText(a, maxChange)})
		}
	}
	return out
}

// unapply undoes the hunks on the new file's text, giving the old one.
func unapply(after string, hunks []unidiff.Hunk) (string, bool) {
	lines := strings.SplitAfter(after, "\n")
	var out []string
	next := 0 // index into lines
	for _, h := range hunks {
		start := h.NewStart - 1
		if h.NewCount == 0 {
			start = h.NewStart // an empty new side sits after line NewStart
		}
		if start < next || start > len(lines) {
			return "", false
		}
		out = append(out, lines[next:start]...)
		n := len(h.NewSide())
		if start+n > len(lines) {
			return "", false
		}
		for _, l := range h.OldSide() {
			out = append(out, l+"\n")
		}
		next = start + n
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, ""), true
}

func oldLines(f unidiff.File) map[int]bool {
	m := map[int]bool{}
	for _, l := range f.Changes() {
		if l.Removed() {
			m[l.OldLine] = true
		}
	}
	// Added lines sit between old lines: count the old line before them.
	for _, h := range f.Hunks {
		old := h.OldStart - 1
		for _, l := range h.Lines {
			if l.OldLine > 0 {
				old = l.OldLine
			}
			if l.Added() {
				m[max(old, 1)] = true
			}
		}
	}
	return m
}

func newLines(f unidiff.File) map[int]bool {
	m := map[int]bool{}
	for _, h := range f.Hunks {
		cur := h.NewStart - 1
		for _, l := range h.Lines {
			if l.NewLine > 0 {
				cur = l.NewLine
			}
			switch {
			case l.Added():
				m[l.NewLine] = true
			case l.Removed():
				m[max(cur, 1)] = true
			}
		}
	}
	return m
}

// declsAt gives the declarations of a file's text (src) that hold one of
// lines, by name.
type declsAt func(src string, lines map[int]bool) map[string]string

// funcsAt are the top-level declarations of src that hold one of lines,
// by name ("func (r *Repo) Parse", "var defaults").
func funcsAt(src string, lines map[int]bool) map[string]string {
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

func relPath(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.Base(p)
}
