package python

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing in Python, read with tree-sitter's Python grammar: the
// literals of the failing tests (their bodies, their parametrize
// decorators, the module-level tables they name and the fixtures they take
// from their file or a conftest.py above it), and the comparisons a patch
// adds to code that is not a test (==, !=, in, is, startswith, endswith,
// match's case patterns) with one of them the code never knew
// (gaterules.SpecialCases).

// SpecialCases names the comparisons the patch adds to non-test Python
// files with a failing test's literal that the file and its directory's
// other modules did not hold before the patch.
func (d Driver) SpecialCases(dir string, patch []unidiff.File, failing []string, isTest func(string) bool) []string {
	isCode := func(p string) bool { return strings.HasSuffix(p, ".py") && !isTest(p) }
	return gaterules.SpecialCases(dir, patch, isCode, d.testLiterals(dir, failing), gaterules.Code{
		Comparisons: comparisons,
		Literals: func(_ string, src []byte, add func(string, int)) bool {
			t, ok := parse(src)
			if !ok {
				return false
			}
			defer t.close()
			literals(t.root(), src, add)
			return true
		},
	})
}

// literalValue is the canonical value of a literal (gaterules.Literal's:
// "number:150", "string:abc"), when it is distinctive enough: numbers
// outside [-2, 2], strings of two characters or more, no f-strings.
func literalValue(n *sitter.Node, src []byte) (string, bool) {
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

// literals calls add with each literal value below n and its line.
func literals(n *sitter.Node, src []byte, add func(v string, line int)) {
	walk(n, func(n *sitter.Node) bool {
		if v, ok := literalValue(n, src); ok {
			add(v, lineOf(n))
			return false
		}
		return true
	})
}

// defs indexes a file's definitions by their chain of names
// ("TestC::test_y"), decorated ones by their decorated_definition, and its
// module-level assignments by name.
type defs struct {
	defs    map[string]*sitter.Node // chain -> the definition, with its decorators
	globals map[string]*sitter.Node // name -> the assignment's right side
}

func indexDefs(root *sitter.Node, src []byte) defs {
	d := defs{defs: map[string]*sitter.Node{}, globals: map[string]*sitter.Node{}}
	var visit func(n *sitter.Node, prefix string)
	visit = func(n *sitter.Node, prefix string) {
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
					visit(body, chain+"::")
				}
			case "expression_statement":
				if prefix == "" {
					d.assignments(c, src)
				}
			case "if_statement", "try_statement", "with_statement", "block", "else_clause", "elif_clause", "except_clause", "finally_clause":
				visit(c, prefix)
			}
		}
	}
	visit(root, "")
	return d
}

// assignments indexes the module-level assignments of a statement.
func (d defs) assignments(stmt *sitter.Node, src []byte) {
	for j := uint(0); j < stmt.NamedChildCount(); j++ {
		a := stmt.NamedChild(j)
		if a.Kind() != "assignment" {
			continue
		}
		if l, r := a.ChildByFieldName("left"), a.ChildByFieldName("right"); l != nil && r != nil && l.Kind() == "identifier" {
			d.globals[l.Utf8Text(src)] = r
		}
	}
}

// testLiterals collects the literals of the failing tests: see the top of
// this file. Tests the driver cannot resolve are passed over.
func (d Driver) testLiterals(dir string, ids []string) map[string]gaterules.Literal {
	lits := map[string]gaterules.Literal{}
	for _, id := range ids {
		t, err := d.Resolve(dir, id)
		if err != nil || t.Test == "" {
			continue
		}
		chain, _ := cutParams(t.Test)
		name := chain[strings.LastIndex(chain, ":")+1:]
		add := func(file string) func(v string, n int) {
			return func(v string, n int) {
				if _, seen := lits[v]; !seen {
					lits[v] = gaterules.Literal{Test: name, Where: fmt.Sprintf("%s:%d", file, n)}
				}
			}
		}
		used, ok := testFileLiterals(dir, t.ImportPath, chain, add(t.ImportPath))
		if !ok {
			continue
		}
		for d := path.Dir(t.ImportPath); ; d = path.Dir(d) {
			conf := path.Join(d, "conftest.py")
			fixtureLiterals(dir, conf, used, add(conf))
			if d == "." || d == "/" {
				break
			}
		}
	}
	return lits
}

// testFileLiterals adds the literals of the test chain of the file and of
// the module-level tables and fixtures of the file it names; used are the
// names it uses. ok is false for a test the file does not hold.
func testFileLiterals(dir, file, chain string, add func(v string, n int)) (used map[string]bool, ok bool) {
	src, err := gaterules.Read(dir, file)
	if err != nil {
		return nil, false
	}
	t, ok := parse(src)
	if !ok {
		return nil, false
	}
	defer t.close()
	ds := indexDefs(t.root(), src)
	fn := ds.defs[chain]
	if fn == nil {
		return nil, false
	}
	literals(fn, src, add)
	used = map[string]bool{}
	walk(fn, func(n *sitter.Node) bool {
		if n.Kind() == "identifier" {
			used[n.Utf8Text(src)] = true
		}
		return true
	})
	for _, g := range gaterules.SortedKeys(used) {
		if r := ds.globals[g]; r != nil {
			literals(r, src, add)
		}
		if fx := ds.defs[g]; fx != nil {
			literals(fx, src, add)
		}
	}
	return used, true
}

// fixtureLiterals adds the literals of the fixtures of conf (a
// conftest.py) that the test uses.
func fixtureLiterals(dir, conf string, used map[string]bool, add func(v string, n int)) {
	src, err := gaterules.Read(dir, conf)
	if err != nil {
		return
	}
	t, ok := parse(src)
	if !ok {
		return
	}
	defer t.close()
	ds := indexDefs(t.root(), src)
	for _, g := range gaterules.SortedKeys(used) {
		if fx := ds.defs[g]; fx != nil {
			literals(fx, src, add)
		}
	}
}

// comparing are comparison operators that single a value out.
var comparing = map[string]bool{"==": true, "!=": true, "in": true, "not in": true, "is": true, "is not": true}

// comparingCall are methods that compare their arguments.
var comparingCall = map[string]bool{"startswith": true, "endswith": true, "__eq__": true, "__contains__": true}

// comparisons are the comparisons of a Python file with literals.
func comparisons(_ string, src []byte) ([]gaterules.Comparison, bool) {
	t, ok := parse(src)
	if !ok {
		return nil, false
	}
	defer t.close()
	var out []gaterules.Comparison
	report := func(at, lit *sitter.Node, what string) {
		if v, ok := literalValue(lit, src); ok {
			out = append(out, gaterules.Comparison{Line: lineOf(at), What: what, Verb: "compares with", Value: v})
		}
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
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "comparison_operator":
			if !comparesValues(n, src) {
				break
			}
			what := gaterules.OneLine(n.Utf8Text(src), 120)
			for i := uint(0); i < n.NamedChildCount(); i++ {
				reportAll(n, n.NamedChild(i), what)
			}
		case "call":
			fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
			if fn == nil || args == nil || fn.Kind() != "attribute" {
				break
			}
			if a := fn.ChildByFieldName("attribute"); a != nil && comparingCall[a.Utf8Text(src)] {
				what := gaterules.OneLine(n.Utf8Text(src), 120)
				for i := uint(0); i < args.NamedChildCount(); i++ {
					reportAll(n, args.NamedChild(i), what)
				}
			}
		case "case_clause":
			for i := uint(0); i < n.NamedChildCount(); i++ {
				if c := n.NamedChild(i); c.Kind() == "case_pattern" {
					what := "case " + gaterules.OneLine(c.Utf8Text(src), 120)
					walk(c, func(x *sitter.Node) bool {
						if _, ok := literalValue(x, src); ok {
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
	return out, true
}

// comparesValues reports a comparison with an operator that singles a
// value out.
func comparesValues(n *sitter.Node, src []byte) bool {
	for i := uint(0); i < n.ChildCount(); i++ {
		if c := n.Child(i); !c.IsNamed() && comparing[strings.Join(strings.Fields(c.Utf8Text(src)), " ")] {
			return true
		}
	}
	return false
}
