// Package codeindex indexes the Go declarations of a source tree — types,
// functions and methods — with go/ast, so that the agent can find a symbol
// by name. The index follows edits cheaply: Refresh re-parses only the files
// whose size or modification time changed.
package codeindex

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kinds of symbols.
const (
	KindStruct    = "struct"
	KindInterface = "interface"
	KindType      = "type" // any other named type, aliases included
	KindFunc      = "func"
	KindMethod    = "method"
)

// Symbol is one declaration.
type Symbol struct {
	Name string `json:"name"`
	// Receiver is a method's receiver type, without '*' or type parameters.
	Receiver string `json:"receiver,omitempty"`
	Kind     string `json:"kind"`
	// File is relative to the indexed directory, with forward slashes.
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	// Signature is the declaration's first part as written: "func (p *P)
	// Parse(s string) error", "type Parser struct".
	Signature string `json:"signature"`
}

// QualifiedName is Receiver.Name for methods and Name otherwise.
func (s Symbol) QualifiedName() string {
	if s.Receiver != "" {
		return s.Receiver + "." + s.Name
	}
	return s.Name
}

// Location is file:line.
func (s Symbol) Location() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

type fileEntry struct {
	size    int64
	mod     time.Time
	symbols []Symbol
}

// Index holds the symbols of the Go files under a directory. It is safe for
// concurrent use.
type Index struct {
	dir   string
	mu    sync.RWMutex
	files map[string]*fileEntry // by relative path
}

// Build indexes the Go files under dir, skipping hidden, "_"-prefixed,
// vendor and testdata directories. A file that does not parse is indexed as
// far as the parser got.
func Build(dir string) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	ix := &Index{dir: abs, files: map[string]*fileEntry{}}
	if err := ix.Refresh(); err != nil {
		return nil, err
	}
	return ix, nil
}

// Dir is the indexed directory.
func (ix *Index) Dir() string { return ix.dir }

// Refresh brings the index up to date with the tree: new and changed files
// are parsed, removed ones dropped. Unchanged files cost one stat.
func (ix *Index) Refresh() error {
	seen := map[string]bool{}
	var changed []string
	stats := map[string]fs.FileInfo{}
	err := filepath.WalkDir(ix.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == ix.dir {
				return err
			}
			return nil // an unreadable corner does not spoil the rest
		}
		name := d.Name()
		if d.IsDir() {
			if path != ix.dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(ix.dir, path)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return nil
		}
		seen[rel] = true
		ix.mu.RLock()
		e := ix.files[rel]
		ix.mu.RUnlock()
		if e == nil || e.size != info.Size() || !e.mod.Equal(info.ModTime()) {
			changed = append(changed, rel)
			stats[rel] = info
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	parsed := map[string]*fileEntry{}
	for _, rel := range changed {
		syms, err := parseFile(ix.dir, rel)
		if err != nil {
			continue // vanished between the walk and the read
		}
		info := stats[rel]
		parsed[rel] = &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for rel := range ix.files {
		if !seen[rel] {
			delete(ix.files, rel)
		}
	}
	for rel, e := range parsed {
		ix.files[rel] = e
	}
	return nil
}

// Reload re-parses one file (relative to the indexed directory), or drops it
// when it no longer exists.
func (ix *Index) Reload(rel string) error {
	rel = filepath.ToSlash(filepath.Clean(rel))
	info, err := os.Stat(filepath.Join(ix.dir, filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			ix.mu.Lock()
			delete(ix.files, rel)
			ix.mu.Unlock()
			return nil
		}
		return fmt.Errorf("reindex %s: %w", rel, err)
	}
	syms, err := parseFile(ix.dir, rel)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", rel, err)
	}
	ix.mu.Lock()
	ix.files[rel] = &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms}
	ix.mu.Unlock()
	return nil
}

func parseFile(dir, rel string) ([]Symbol, error) {
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	// A partial tree is still worth indexing: a file being edited may not
	// parse.
	f, _ := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if f == nil {
		return nil, nil
	}
	var out []Symbol
	line := func(p token.Pos) int { return fset.Position(p).Line }
	text := func(from, to token.Pos) string {
		a, b := fset.Position(from).Offset, fset.Position(to).Offset
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return strings.Join(strings.Fields(string(src[a:b])), " ")
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			s := Symbol{Name: d.Name.Name, Kind: KindFunc, File: rel, Line: line(d.Pos()), EndLine: line(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = KindMethod
				s.Receiver = receiverName(d.Recv.List[0].Type)
			}
			end := d.End()
			if d.Body != nil {
				end = d.Body.Lbrace
			}
			s.Signature = text(d.Pos(), end)
			out = append(out, s)
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				s := Symbol{Name: ts.Name.Name, Kind: KindType, File: rel, Line: line(ts.Pos()), EndLine: line(ts.End())}
				if len(d.Specs) == 1 && !d.Lparen.IsValid() {
					s.Line = line(d.Pos())
				}
				head := ts.Type.Pos()
				switch t := ts.Type.(type) {
				case *ast.StructType:
					s.Kind, head = KindStruct, t.Fields.Opening
				case *ast.InterfaceType:
					s.Kind, head = KindInterface, t.Methods.Opening
				default:
					head = ts.End()
				}
				s.Signature = "type " + text(ts.Pos(), head)
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// all returns every symbol, ordered by file and line.
func (ix *Index) all(keep func(Symbol) bool) []Symbol {
	ix.mu.RLock()
	var out []Symbol
	for _, e := range ix.files {
		for _, s := range e.symbols {
			if keep(s) {
				out = append(out, s)
			}
		}
	}
	ix.mu.RUnlock()
	sortSymbols(out)
	return out
}

func sortSymbols(ss []Symbol) {
	sort.SliceStable(ss, func(i, j int) bool {
		ti, tj := isTestFile(ss[i].File), isTestFile(ss[j].File)
		if ti != tj {
			return !ti // non-test files first
		}
		if ss[i].File != ss[j].File {
			return ss[i].File < ss[j].File
		}
		return ss[i].Line < ss[j].Line
	})
}

func isTestFile(p string) bool { return strings.HasSuffix(p, "_test.go") }

func isType(s Symbol) bool {
	return s.Kind == KindStruct || s.Kind == KindInterface || s.Kind == KindType
}

func isFunc(s Symbol) bool { return s.Kind == KindFunc || s.Kind == KindMethod }

// byName keeps the exact matches of name, or when there are none the
// case-insensitive ones.
func byName(ix *Index, name string, keep func(Symbol) bool) []Symbol {
	exact := ix.all(func(s Symbol) bool { return keep(s) && s.Name == name })
	if len(exact) > 0 {
		return exact
	}
	return ix.all(func(s Symbol) bool { return keep(s) && strings.EqualFold(s.Name, name) })
}

// FindTypes returns the named types called name (exactly, or ignoring case
// when nothing matches exactly), non-test files first.
func (ix *Index) FindTypes(name string) []Symbol { return byName(ix, name, isType) }

// FindFuncs returns the functions and methods called name (exactly, or
// ignoring case when nothing matches exactly). "Type.Name" finds methods of
// Type.
func (ix *Index) FindFuncs(name string) []Symbol {
	if class, m, ok := strings.Cut(name, "."); ok && class != "" && m != "" {
		return ix.FindMethod(class, m)
	}
	return byName(ix, name, isFunc)
}

// FindMethod returns the methods called name whose receiver type is class
// (a leading '*' is ignored).
func (ix *Index) FindMethod(class, name string) []Symbol {
	class = strings.TrimLeft(strings.TrimSpace(class), "*")
	exact := ix.all(func(s Symbol) bool { return s.Kind == KindMethod && s.Receiver == class && s.Name == name })
	if len(exact) > 0 {
		return exact
	}
	return ix.all(func(s Symbol) bool {
		return s.Kind == KindMethod && strings.EqualFold(s.Receiver, class) && strings.EqualFold(s.Name, name)
	})
}

// MethodsOf returns the methods whose receiver type is class.
func (ix *Index) MethodsOf(class string) []Symbol {
	class = strings.TrimLeft(strings.TrimSpace(class), "*")
	return ix.all(func(s Symbol) bool { return s.Kind == KindMethod && s.Receiver == class })
}

// InFile returns the symbols of one file (relative path), in line order.
func (ix *Index) InFile(rel string) []Symbol {
	rel = filepath.ToSlash(filepath.Clean(rel))
	ix.mu.RLock()
	e := ix.files[rel]
	var out []Symbol
	if e != nil {
		out = append(out, e.symbols...)
	}
	ix.mu.RUnlock()
	return out
}

// FuncsInFile returns the functions and methods of one file, in line order.
func (ix *Index) FuncsInFile(rel string) []Symbol {
	var out []Symbol
	for _, s := range ix.InFile(rel) {
		if isFunc(s) {
			out = append(out, s)
		}
	}
	return out
}

// Similar returns up to n symbols whose name contains query or is contained
// in it, ignoring case: suggestions for a name that matched nothing. kind
// filters by kind ("" for any; "type" means any type, "func" any function).
func (ix *Index) Similar(query, kind string, n int) []Symbol {
	q := strings.ToLower(query)
	if i := strings.LastIndex(q, "."); i >= 0 {
		q = q[i+1:]
	}
	if q == "" {
		return nil
	}
	keep := func(s Symbol) bool {
		switch kind {
		case KindType:
			if !isType(s) {
				return false
			}
		case KindFunc:
			if !isFunc(s) {
				return false
			}
		case "":
		default:
			if s.Kind != kind {
				return false
			}
		}
		l := strings.ToLower(s.Name)
		return strings.Contains(l, q) || (len(l) >= 3 && strings.Contains(q, l))
	}
	out := ix.all(keep)
	sort.SliceStable(out, func(i, j int) bool {
		return abs(len(out[i].Name)-len(query)) < abs(len(out[j].Name)-len(query))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Len is the number of indexed symbols.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for _, e := range ix.files {
		n += len(e.symbols)
	}
	return n
}
