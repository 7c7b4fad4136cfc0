package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"testing"
)

// maxFuncLines bounds a function outside tests, from its signature to its
// closing brace: a longer one has parts a reader would want named.
const maxFuncLines = 100

// longFunctions are the functions that were longer when the rule came
// (issue 32), as FILE:NAME. The list only shrinks: a function split comes
// off it (TestLongFunctionListShrinks fails while one that fits is still
// on it), and none is added.
var longFunctions = []string{
	"pkg/harness/offline/candidates.go:rank",
	"pkg/harness/offline/reading.go:nextRead",
	"pkg/harness/offline/decide.go:decide",
	"pkg/harness/offline/jsfuncs.go:jsMask",
}

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
// maxFuncLines, but those of longFunctions.
func TestNoLongFunction(t *testing.T) {
	known := map[string]bool{}
	for _, k := range longFunctions {
		known[k] = true
	}
	var long []string
	for k, n := range functionLengths(t) {
		if n > maxFuncLines {
			long = append(long, k)
			if !known[k] {
				t.Errorf("%s has %d lines, more than %d: split it where a reader would want a name", k, n, maxFuncLines)
			}
		}
	}
	sort.Strings(long)
	t.Logf("%d functions over %d lines (%d of them on longFunctions)", len(long), maxFuncLines, len(longFunctions))
}

// TestLongFunctionListShrinks: a function of longFunctions that fits (or
// is gone) comes off the list.
func TestLongFunctionListShrinks(t *testing.T) {
	lengths := functionLengths(t)
	for _, k := range longFunctions {
		if lengths[k] <= maxFuncLines {
			t.Errorf("%s has %d lines now: take it off longFunctions", k, lengths[k])
		}
	}
}
