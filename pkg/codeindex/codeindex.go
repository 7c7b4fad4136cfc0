// Package codeindex indexes the Go declarations of a source tree — types,
// functions and methods — with go/ast, so that the agent can find a symbol
// by name. The index follows edits cheaply: Refresh re-parses only the files
// whose size or modification time changed.
package codeindex

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfix/redfix/pkg/untrusted"
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
// concurrent use. Lookups by name go through two maps, from a lower-cased
// name and a lower-cased receiver type to the files declaring them, so that
// a search reads only the files that can answer it.
type Index struct {
	dir   string
	mu    sync.RWMutex
	files map[string]*fileEntry // by relative path
	names map[string]map[string]struct{}
	recvs map[string]map[string]struct{}
	// gen counts the changes to the set of names; list is the names as
	// one text, made again when gen moved past it.
	gen    uint64
	listMu sync.Mutex
	list   *nameList
}

// nameList is the index's lower-cased names joined by newlines, so that the
// names holding a query are found by one substring scan.
type nameList struct {
	gen    uint64
	text   string
	starts []int
	keys   []string
}

// Build indexes the Go files under dir, skipping hidden, "_"-prefixed,
// vendor and testdata directories. A file that does not parse is indexed as
// far as the parser got.
func Build(dir string) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	ix := &Index{dir: abs, files: map[string]*fileEntry{}, names: map[string]map[string]struct{}{}, recvs: map[string]map[string]struct{}{}}
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
	// The files are parsed side by side, one worker a CPU.
	entries := make([]*fileEntry, len(changed))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), len(changed)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(changed) {
					return
				}
				syms, err := parseFile(ix.dir, changed[i])
				if err != nil {
					continue // vanished between the walk and the read
				}
				info := stats[changed[i]]
				entries[i] = &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms}
			}
		}()
	}
	wg.Wait()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for rel := range ix.files {
		if !seen[rel] {
			ix.setLocked(rel, nil)
		}
	}
	for i, e := range entries {
		if e != nil {
			ix.setLocked(changed[i], e)
		}
	}
	return nil
}

// setLocked puts e as the entry of rel (nil drops it), keeping the name
// maps in step. ix.mu is held for writing.
func (ix *Index) setLocked(rel string, e *fileEntry) {
	if old := ix.files[rel]; old != nil {
		for _, s := range old.symbols {
			if unlink(ix.names, strings.ToLower(s.Name), rel) {
				ix.gen++
			}
			if s.Receiver != "" {
				unlink(ix.recvs, strings.ToLower(s.Receiver), rel)
			}
		}
	}
	if e == nil {
		delete(ix.files, rel)
		return
	}
	ix.files[rel] = e
	for _, s := range e.symbols {
		if link(ix.names, strings.ToLower(s.Name), rel) {
			ix.gen++
		}
		if s.Receiver != "" {
			link(ix.recvs, strings.ToLower(s.Receiver), rel)
		}
	}
}

func link(m map[string]map[string]struct{}, key, rel string) bool {
	set := m[key]
	created := set == nil
	if created {
		set = map[string]struct{}{}
		m[key] = set
	}
	set[rel] = struct{}{}
	return created
}

func unlink(m map[string]map[string]struct{}, key, rel string) bool {
	if set := m[key]; set != nil {
		delete(set, rel)
		if len(set) == 0 {
			delete(m, key)
			return true
		}
	}
	return false
}

// Reload re-parses one file (relative to the indexed directory), or drops it
// when it no longer exists.
func (ix *Index) Reload(rel string) error {
	rel = filepath.ToSlash(filepath.Clean(rel))
	info, err := os.Stat(filepath.Join(ix.dir, filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			ix.mu.Lock()
			ix.setLocked(rel, nil)
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
	ix.setLocked(rel, &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms})
	ix.mu.Unlock()
	return nil
}

// MaxFileSize is the largest file indexed: a larger one (generated code, or
// a file a test wrote to exhaust the bot's memory) is left out.
const MaxFileSize = 2 << 20

func parseFile(dir, rel string) ([]Symbol, error) {
	// Beneath the checkout, through no link, sized before it is read.
	src, err := untrusted.ReadFile(dir, rel, MaxFileSize)
	if errors.Is(err, untrusted.ErrTooLarge) || errors.Is(err, untrusted.ErrLink) || errors.Is(err, untrusted.ErrNotRegular) {
		return nil, nil
	}
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

// from returns the symbols that keep accepts among the files that the map
// m links to any of keys, ordered as all orders them.
func (ix *Index) from(m map[string]map[string]struct{}, keys []string, keep func(Symbol) bool) []Symbol {
	ix.mu.RLock()
	var out []Symbol
	done := map[string]bool{}
	for _, k := range keys {
		for rel := range m[k] {
			if done[rel] {
				continue
			}
			done[rel] = true
			for _, s := range ix.files[rel].symbols {
				if keep(s) {
					out = append(out, s)
				}
			}
		}
	}
	ix.mu.RUnlock()
	sortSymbols(out)
	return out
}

// byName keeps the exact matches of name, or when there are none the
// case-insensitive ones.
func byName(ix *Index, name string, keep func(Symbol) bool) []Symbol {
	folded := ix.from(ix.names, []string{strings.ToLower(name)}, func(s Symbol) bool { return keep(s) && strings.EqualFold(s.Name, name) })
	var exact []Symbol
	for _, s := range folded {
		if s.Name == name {
			exact = append(exact, s)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
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
	folded := ix.from(ix.recvs, []string{strings.ToLower(class)}, func(s Symbol) bool {
		return s.Kind == KindMethod && strings.EqualFold(s.Receiver, class) && strings.EqualFold(s.Name, name)
	})
	var exact []Symbol
	for _, s := range folded {
		if s.Receiver == class && s.Name == name {
			exact = append(exact, s)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}

// MethodsOf returns the methods whose receiver type is class.
func (ix *Index) MethodsOf(class string) []Symbol {
	class = strings.TrimLeft(strings.TrimSpace(class), "*")
	return ix.from(ix.recvs, []string{strings.ToLower(class)}, func(s Symbol) bool { return s.Kind == KindMethod && s.Receiver == class })
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
		return like(strings.ToLower(s.Name), q)
	}
	out := ix.from(ix.names, ix.likeNames(q), keep)
	sort.SliceStable(out, func(i, j int) bool {
		return abs(len(out[i].Name)-len(query)) < abs(len(out[j].Name)-len(query))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// maxLike bounds the names Similar reads the symbols of: the ones closest
// in length to the query are kept.
const maxLike = 400

// likeNames returns the lower-cased names that hold q (lower case), or
// that q holds when they have three characters or more.
func (ix *Index) likeNames(q string) []string {
	if strings.ContainsRune(q, '\n') {
		return nil
	}
	list := ix.nameList()
	seen := map[string]bool{}
	var keys []string
	for off := 0; off < len(list.text); {
		i := strings.Index(list.text[off:], q)
		if i < 0 {
			break
		}
		k := sort.SearchInts(list.starts, off+i+1) - 1
		if key := list.keys[k]; !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
		off = list.starts[k] + len(list.keys[k]) + 1
	}
	ix.mu.RLock()
	for a := 0; a < len(q); a++ {
		for b := a + 3; b <= len(q); b++ {
			if _, ok := ix.names[q[a:b]]; ok && !seen[q[a:b]] {
				seen[q[a:b]] = true
				keys = append(keys, q[a:b])
			}
		}
	}
	ix.mu.RUnlock()
	if len(keys) > maxLike {
		sort.Slice(keys, func(i, j int) bool {
			di, dj := abs(len(keys[i])-len(q)), abs(len(keys[j])-len(q))
			if di != dj {
				return di < dj
			}
			return keys[i] < keys[j]
		})
		keys = keys[:maxLike]
	}
	return keys
}

// nameList returns the names as one text, made again after changes.
func (ix *Index) nameList() *nameList {
	ix.listMu.Lock()
	defer ix.listMu.Unlock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.list != nil && ix.list.gen == ix.gen {
		return ix.list
	}
	l := &nameList{gen: ix.gen, keys: make([]string, 0, len(ix.names))}
	for k := range ix.names {
		l.keys = append(l.keys, k)
	}
	sort.Strings(l.keys)
	var b strings.Builder
	l.starts = make([]int, len(l.keys))
	for i, k := range l.keys {
		l.starts[i] = b.Len()
		b.WriteString(k)
		b.WriteByte('\n')
	}
	l.text = b.String()
	ix.list = l
	return l
}

// like: a name l (lower case) holds the query q, or is held by it.
func like(l, q string) bool {
	return strings.Contains(l, q) || (len(l) >= 3 && strings.Contains(q, l))
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

// All returns every symbol, non-test files first, then by file and line.
func (ix *Index) All() []Symbol { return ix.all(func(Symbol) bool { return true }) }
