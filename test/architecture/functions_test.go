package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxFuncLines bounds a function outside tests, from its signature to its
// closing brace: a longer one has parts a reader would want named.
const maxFuncLines = 100

// functionLengths are the lines of every function with a body in the
// module's non-test files, by FILE:NAME.
func functionLengths(t *testing.T) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]int{}
	for _, p := range packages(t) {
		for _, n := range p.GoFiles {
			path := filepath.Join(p.Dir, n)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root(t), path)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				key := filepath.ToSlash(rel) + ":" + fd.Name.Name
				out[key] = max(out[key], lines)
			}
		}
	}
	return out
}

// TestNoLongFunction: no function outside tests is longer than
// maxFuncLines. (The last of the functions that were longer when the rule
// came, the offline policy's rank, nextRead, decide and jsMask, were split
// in issue 32.)
func TestNoLongFunction(t *testing.T) {
	for k, n := range functionLengths(t) {
		if n > maxFuncLines {
			t.Errorf("%s has %d lines, more than %d: split it where a reader would want a name", k, n, maxFuncLines)
		}
	}
}
