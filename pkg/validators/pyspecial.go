package validators

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterpython "github.com/tree-sitter/tree-sitter-python/bindings/go"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing in Python, read with tree-sitter's Python grammar: the
// literals of the failing tests (their bodies, their parametrize
// decorators, the module-level tables they name and the fixtures they take
// from their file or a conftest.py above it), and the comparisons a patch
// adds to code that is not a test (==, !=, in, is, startswith, endswith,
// match's case patterns) with one of them the code never knew.

// pyTree is a parsed Python file; close it.
type pyTree struct {
	tree *sitter.Tree
	src  []byte
}

func (t pyTree) root() *sitter.Node { return t.tree.RootNode() }
func (t pyTree) close()             { t.tree.Close() }

// parsePy parses src, ok false when tree-sitter cannot.
func parsePy(src []byte) (pyTree, bool) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(sitter.NewLanguage(sitterpython.Language())); err != nil {
		return pyTree{}, false
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return pyTree{}, false
	}
	return pyTree{tree, src}, true
}

// line is the 1-based line n starts on.
func line(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// walkPy calls fn on n and every node below it, in order, skipping what
// is below a node fn returns false for.
func walkPy(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkPy(n.NamedChild(i), fn)
	}
}

// pyLiteralValue is the canonical value of a literal, as literalValue's
// for Go ("number:150", "string:abc"), when it is distinctive enough:
// numbers outside [-2, 2], strings of two characters or more, no
// f-strings.
func pyLiteralValue(n *sitter.Node, src []byte) (string, bool) {
	neg := false
	if n.Kind() == "unary_operator" {
		op := n.ChildByFieldName("operator")
		arg := n.ChildByFieldName("argument")
		if op == nil || arg == nil || op.Kind() != "-" {
			return "", false
		}
		neg, n = true, arg
	}
	switch n.Kind() {
	case "integer", "float":
		text := strings.ReplaceAll(n.Utf8Text(src), "_", "")
		var f float64
		if i, err := strconv.ParseInt(text, 0, 64); err == nil {
			f = float64(i)
		} else if f, err = strconv.ParseFloat(text, 64); err != nil {
			return "", false
		}
		if neg {
			f = -f
		}
		if f >= -2 && f <= 2 {
			return "", false
		}
		return "number:" + strconv.FormatFloat(f, 'g', -1, 64), true
	case "string":
		if neg {
			return "", false
		}
		var b strings.Builder
		for i := uint(0); i < n.NamedChildCount(); i++ {
			switch c := n.NamedChild(i); c.Kind() {
			case "interpolation":
				return "", false
			case "string_content", "escape_sequence":
				b.WriteString(c.Utf8Text(src))
			}
		}
		s := b.String()
		if len([]rune(strings.TrimSpace(s))) < 2 {
			return "", false
		}
		return "string:" + s, true
	}
	return "", false
}

// pyLiterals calls add with each literal value below n and its line.
func pyLiterals(n *sitter.Node, src []byte, add func(v string, line int)) {
	walkPy(n, func(n *sitter.Node) bool {
		if v, ok := pyLiteralValue(n, src); ok {
			add(v, line(n))
			return false
		}
		return true
	})
}

// pyDefs indexes a file's definitions by their chain of names
// ("TestC::test_y"), decorated ones by their decorated_definition, and its
// module-level assignments by name.
type pyDefs struct {
	defs    map[string]*sitter.Node // chain -> the definition, with its decorators
	globals map[string]*sitter.Node // name -> the assignment's right side
}

func indexPyDefs(root *sitter.Node, src []byte) pyDefs {
	d := pyDefs{defs: map[string]*sitter.Node{}, globals: map[string]*sitter.Node{}}
	var walk func(n *sitter.Node, prefix string)
	walk = func(n *sitter.Node, prefix string) {
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			outer := c
			if c.Kind() == "decorated_definition" {
				if c = c.ChildByFieldName("definition"); c == nil {
					continue
				}
			}
			switch c.Kind() {
			case "function_definition", "class_definition":
				name := c.ChildByFieldName("name")
				if name == nil {
					continue
				}
				chain := prefix + name.Utf8Text(src)
				d.defs[chain] = outer
				if body := c.ChildByFieldName("body"); body != nil && c.Kind() == "class_definition" {
					walk(body, chain+"::")
				}
			case "expression_statement":
				if prefix != "" {
					continue
				}
				for j := uint(0); j < c.NamedChildCount(); j++ {
					a := c.NamedChild(j)
					if a.Kind() != "assignment" {
						continue
					}
					if l, r := a.ChildByFieldName("left"), a.ChildByFieldName("right"); l != nil && r != nil && l.Kind() == "identifier" {
						d.globals[l.Utf8Text(src)] = r
					}
				}
			case "if_statement", "try_statement", "with_statement", "block", "else_clause", "elif_clause", "except_clause", "finally_clause":
				walk(c, prefix)
			}
		}
	}
	walk(root, "")
	return d
}

// pyTestLiterals collects the literals of the failing tests: see the top of
// this file. Tests the driver cannot resolve are passed over.
func pyTestLiterals(dir string, l Language, ids []string) map[string]testLiteral {
	lits := map[string]testLiteral{}
	for _, id := range ids {
		t, err := l.Resolve(dir, id)
		if err != nil || t.Test == "" {
			continue
		}
		chain, _ := cutPyParams(t.Test)
		src, err := readBeneath(dir, t.ImportPath, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parsePy(src)
		if !ok {
			continue
		}
		defs := indexPyDefs(tree.root(), src)
		fn := defs.defs[chain]
		if fn == nil {
			tree.close()
			continue
		}
		name := chain[strings.LastIndex(chain, ":")+1:]
		add := func(file string) func(v string, n int) {
			return func(v string, n int) {
				if _, seen := lits[v]; !seen {
					lits[v] = testLiteral{test: name, where: fmt.Sprintf("%s:%d", file, n)}
				}
			}
		}
		pyLiterals(fn, src, add(t.ImportPath))
		// The module-level tables and the fixtures it names.
		used := map[string]bool{}
		walkPy(fn, func(n *sitter.Node) bool {
			if n.Kind() == "identifier" {
				used[n.Utf8Text(src)] = true
			}
			return true
		})
		for _, g := range sortedKeys(used) {
			if r := defs.globals[g]; r != nil {
				pyLiterals(r, src, add(t.ImportPath))
			}
			if fx := defs.defs[g]; fx != nil {
				pyLiterals(fx, src, add(t.ImportPath))
			}
		}
		tree.close()
		for d := path.Dir(t.ImportPath); ; d = path.Dir(d) {
			conf := path.Join(d, "conftest.py")
			if csrc, err := readBeneath(dir, conf, maxSourceBytes); err == nil {
				if ct, ok := parsePy(csrc); ok {
					cdefs := indexPyDefs(ct.root(), csrc)
					for _, g := range sortedKeys(used) {
						if fx := cdefs.defs[g]; fx != nil {
							pyLiterals(fx, csrc, add(conf))
						}
					}
					ct.close()
				}
			}
			if d == "." || d == "/" {
				break
			}
		}
	}
	return lits
}

// cutPyParams splits "test_y[1.5-a]" into its name and its parameters.
func cutPyParams(id string) (string, string) {
	if i := strings.IndexByte(id, '['); i >= 0 {
		return id[:i], id[i:]
	}
	return id, ""
}

// pyComparing are comparison operators that single a value out.
var pyComparing = map[string]bool{"==": true, "!=": true, "in": true, "not in": true, "is": true, "is not": true}

// pyComparingCall are methods that compare their arguments.
var pyComparingCall = map[string]bool{"startswith": true, "endswith": true, "__eq__": true, "__contains__": true}

// pySpecialCases is specialCases for Python: the comparisons the patch adds
// to non-test Python files with a failing test's literal that the file and
// its directory's other modules did not hold before the patch.
func pySpecialCases(dir string, files []unidiff.File, isTest func(string) bool, lits map[string]testLiteral) []string {
	if len(lits) == 0 {
		return nil
	}
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
	known := map[string]map[string]bool{} // directory -> literals its modules held
	for _, f := range files {
		p := f.NewPath
		if p == "" || !strings.HasSuffix(p, ".py") || isTest(p) || len(addedIn[p]) == 0 {
			continue
		}
		src, err := readBeneath(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parsePy(src)
		if !ok {
			continue
		}
		d := path.Dir(p)
		if known[d] == nil {
			known[d] = pyDirLiterals(dir, d, isTest, addedIn)
		}
		added := addedIn[p]
		report := func(at, lit *sitter.Node, what string) {
			v, ok := pyLiteralValue(lit, src)
			if !ok {
				return
			}
			tl, inTest := lits[v]
			if !inTest || !added[line(at)] || known[d][v] {
				return
			}
			bad = append(bad, fmt.Sprintf("%s:%d: special-cases a value of the failing test: %s compares with %s, which %s uses at %s and the code never did before",
				p, line(at), what, showLiteral(v), tl.test, tl.where))
		}
		reportAll := func(at, operand *sitter.Node, what string) {
			switch operand.Kind() {
			case "tuple", "list", "set", "parenthesized_expression":
				for i := uint(0); i < operand.NamedChildCount(); i++ {
					report(at, operand.NamedChild(i), what)
				}
			default:
				report(at, operand, what)
			}
		}
		walkPy(tree.root(), func(n *sitter.Node) bool {
			switch n.Kind() {
			case "comparison_operator":
				comparing := false
				for i := uint(0); i < n.ChildCount(); i++ {
					if c := n.Child(i); !c.IsNamed() && pyComparing[strings.Join(strings.Fields(c.Utf8Text(src)), " ")] {
						comparing = true
					}
				}
				if comparing {
					what := oneLineText(n.Utf8Text(src), 120)
					for i := uint(0); i < n.NamedChildCount(); i++ {
						reportAll(n, n.NamedChild(i), what)
					}
				}
			case "call":
				fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
				if fn != nil && args != nil && fn.Kind() == "attribute" {
					if a := fn.ChildByFieldName("attribute"); a != nil && pyComparingCall[a.Utf8Text(src)] {
						what := oneLineText(n.Utf8Text(src), 120)
						for i := uint(0); i < args.NamedChildCount(); i++ {
							reportAll(n, args.NamedChild(i), what)
						}
					}
				}
			case "case_clause":
				for i := uint(0); i < n.NamedChildCount(); i++ {
					if c := n.NamedChild(i); c.Kind() == "case_pattern" {
						what := "case " + oneLineText(c.Utf8Text(src), 120)
						walkPy(c, func(x *sitter.Node) bool {
							if _, ok := pyLiteralValue(x, src); ok {
								report(c, x, what)
								return false
							}
							return true
						})
					}
				}
			}
			return true
		})
		tree.close()
	}
	sort.Strings(bad)
	return dedupStrings(bad)
}

// pyDirLiterals are the literals of the non-test Python modules in the
// directory d, outside the lines the patch added.
func pyDirLiterals(dir, d string, isTest func(string) bool, addedIn map[string]map[int]bool) map[string]bool {
	out := map[string]bool{}
	names, err := listFiles(dir, d)
	if err != nil {
		return out
	}
	for _, name := range names {
		p := path.Join(d, name)
		if !strings.HasSuffix(name, ".py") || isTest(p) {
			continue
		}
		src, err := readBeneath(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parsePy(src)
		if !ok {
			continue
		}
		added := addedIn[p]
		pyLiterals(tree.root(), src, func(v string, n int) {
			if !added[n] {
				out[v] = true
			}
		})
		tree.close()
	}
	return out
}
