package node

import (
	"path"
	"strconv"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	sitterts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

var (
	grammarOnce          sync.Once
	jsGrammar, tsGrammar *sitter.Language
	tsxGrammar           *sitter.Language
)

// grammar is the tree-sitter language of a file by its extension:
// TypeScript's for .ts, .mts and .cts, TSX's for .tsx, JavaScript's (which
// reads JSX) for the others. The node kinds the readers look at are the
// same in the three.
func grammar(rel string) *sitter.Language {
	grammarOnce.Do(func() {
		jsGrammar = sitter.NewLanguage(sitterjs.Language())
		tsGrammar = sitter.NewLanguage(sitterts.LanguageTypescript())
		tsxGrammar = sitter.NewLanguage(sitterts.LanguageTSX())
	})
	switch path.Ext(rel) {
	case ".ts", ".mts", ".cts":
		return tsGrammar
	case ".tsx":
		return tsxGrammar
	}
	return jsGrammar
}

// tree is a parsed JavaScript or TypeScript file; close it.
type tree struct {
	t   *sitter.Tree
	src []byte
}

func (t tree) root() *sitter.Node         { return t.t.RootNode() }
func (t tree) close()                     { t.t.Close() }
func (t tree) text(n *sitter.Node) string { return n.Utf8Text(t.src) }

// parseTree parses src as the file rel, ok false when tree-sitter cannot.
// A file with syntax errors is still read: tree-sitter recovers, and the
// parts it understood are what the readers look at.
func parseTree(rel string, src []byte) (tree, bool) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(grammar(rel)); err != nil {
		return tree{}, false
	}
	t := parser.Parse(src, nil)
	if t == nil {
		return tree{}, false
	}
	return tree{t, src}, true
}

// parse parses src with rel's grammar and calls fn with the tree's root;
// a file the parser cannot start on is passed over. The tree is closed
// when fn returns.
func parse(rel string, src []byte, fn func(root *sitter.Node)) {
	t, ok := parseTree(rel, src)
	if !ok {
		return
	}
	defer t.close()
	fn(t.root())
}

// walk calls fn on n and every named node below it, in order, skipping
// what is below a node fn returns false for.
func walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walk(n.NamedChild(i), fn)
	}
}

// lineOf is the 1-based line n starts on.
func lineOf(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// suiteFuncs, testFuncs and benchFuncs are the functions that declare
// describe blocks, tests and benchmarks in jest, vitest, mocha, jasmine
// and node:test, with their x- (skipped) and f- (focused) forms; hookFuncs
// the hooks that run before a suite's tests. Every reader of a test file
// (the names the driver resolves, the gates, the judge's context) asks
// these.
var (
	suiteFuncs = map[string]bool{
		"describe": true, "context": true, "suite": true,
		"xdescribe": true, "xcontext": true, "xsuite": true, "fdescribe": true, "fcontext": true,
	}
	testFuncs = map[string]bool{
		"it": true, "test": true, "specify": true,
		"xit": true, "xtest": true, "xspecify": true, "fit": true, "ftest": true,
	}
	benchFuncs = map[string]bool{"bench": true}
	hookFuncs  = map[string]bool{"beforeEach": true, "beforeAll": true, "before": true}
)

// declared is a test as its file declares it: its describe blocks and
// title, and its line (1-based).
type declared struct {
	names []string
	line  int
}

// name is the test's full name, its describe blocks and title joined by
// " > ".
func (t declared) name() string { return strings.Join(t.names, " > ") }

// declaredTests are the tests a file declares with literal names:
// describe("a", () => { it("b", ...) }) is "a > b". Tests named by an
// expression, or made in a loop or by .each, are not seen: the runner
// lists them (List).
func declaredTests(rel string, src []byte) []declared {
	var out []declared
	parse(rel, src, func(root *sitter.Node) {
		walkTests(root, src, nil, &out)
	})
	return out
}

func walkTests(n *sitter.Node, src []byte, suites []string, out *[]declared) {
	if n.Kind() == "call_expression" {
		if isEach(n.ChildByFieldName("function"), src) {
			// describe.each(table)("name %s", fn): its names are made at
			// run time.
			return
		}
		if kind, name, ok := testCall(n, src); ok {
			names := append(append([]string(nil), suites...), name)
			if kind == "test" {
				*out = append(*out, declared{names: names, line: int(n.StartPosition().Row) + 1})
				return
			}
			if args := n.ChildByFieldName("arguments"); args != nil {
				walkTests(args, src, names, out)
			}
			return
		}
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if c := n.NamedChild(i); c != nil {
			walkTests(c, src, suites, out)
		}
	}
}

// testCall reports a call declaring a suite or a test with a literal name:
// describe("x", fn), it.only("y", fn), test.skip(`z`, fn).
func testCall(n *sitter.Node, src []byte) (kind, name string, ok bool) {
	fn := n.ChildByFieldName("function")
	if fn == nil {
		return "", "", false
	}
	callee := ""
	switch fn.Kind() {
	case "identifier":
		callee = fn.Utf8Text(src)
	case "member_expression":
		obj := fn.ChildByFieldName("object")
		if obj == nil || obj.Kind() != "identifier" {
			return "", "", false
		}
		prop := fn.ChildByFieldName("property")
		if prop != nil && prop.Utf8Text(src) == "each" {
			return "", "", false
		}
		callee = obj.Utf8Text(src)
	default:
		return "", "", false
	}
	switch {
	case suiteFuncs[callee]:
		kind = "suite"
	case testFuncs[callee]:
		kind = "test"
	default:
		return "", "", false
	}
	args := n.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return "", "", false
	}
	name, ok = literal(args.NamedChild(0), src)
	return kind, name, ok
}

// literal is the value of a string literal or of a template literal
// without substitutions, ok false for anything else.
func literal(n *sitter.Node, src []byte) (string, bool) {
	if n == nil {
		return "", false
	}
	switch n.Kind() {
	case "string", "template_string":
	default:
		return "", false
	}
	var b strings.Builder
	for i := uint(0); i < n.NamedChildCount(); i++ {
		switch c := n.NamedChild(i); c.Kind() {
		case "string_fragment":
			b.WriteString(c.Utf8Text(src))
		case "escape_sequence":
			b.WriteString(unescape(c.Utf8Text(src)))
		case "template_substitution":
			return "", false
		}
	}
	if n.Kind() == "template_string" && n.NamedChildCount() == 0 {
		// The grammar keeps a template's text in the node itself.
		t := n.Utf8Text(src)
		return strings.TrimSuffix(strings.TrimPrefix(t, "`"), "`"), true
	}
	return b.String(), true
}

// unescape is an escape sequence's value: Go's reading of it where it is
// one of Go's too (\n, \u00e9), else the character escaped (\').
func unescape(s string) string {
	if v, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return v
	}
	return strings.TrimPrefix(s, `\`)
}

// isEach reports the call of a table's tests: describe.each(table),
// it.each`table`.
func isEach(fn *sitter.Node, src []byte) bool {
	if fn == nil || fn.Kind() != "call_expression" {
		return false
	}
	callee := fn.ChildByFieldName("function")
	if callee == nil || callee.Kind() != "member_expression" {
		return false
	}
	prop := callee.ChildByFieldName("property")
	return prop != nil && prop.Utf8Text(src) == "each"
}
