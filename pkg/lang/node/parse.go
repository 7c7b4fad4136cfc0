package node

import (
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	sitterts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// grammar is the tree-sitter language of a file by its extension:
// TypeScript's for .ts, .mts and .cts, TSX's for .tsx, JavaScript's (which
// reads JSX) for the others.
func grammar(rel string) *sitter.Language {
	switch path.Ext(rel) {
	case ".ts", ".mts", ".cts":
		return sitter.NewLanguage(sitterts.LanguageTypescript())
	case ".tsx":
		return sitter.NewLanguage(sitterts.LanguageTSX())
	}
	return sitter.NewLanguage(sitterjs.Language())
}

// parse parses src with rel's grammar and calls fn with the tree's root;
// a file the parser cannot start on is passed over. The tree is closed
// when fn returns.
func parse(rel string, src []byte, fn func(root *sitter.Node)) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(grammar(rel)); err != nil {
		return
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return
	}
	defer tree.Close()
	fn(tree.RootNode())
}

// suiteFuncs and testFuncs are the functions that declare describe blocks
// and tests, in jest, vitest, mocha and node:test.
var (
	suiteFuncs = map[string]bool{"describe": true, "context": true, "suite": true, "fdescribe": true, "xdescribe": true}
	testFuncs  = map[string]bool{"it": true, "test": true, "specify": true, "fit": true, "xit": true, "xtest": true}
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

// literal is the value of a string literal or a template without
// substitutions.
func literal(n *sitter.Node, src []byte) (string, bool) {
	if n == nil {
		return "", false
	}
	switch n.Kind() {
	case "string":
		var b strings.Builder
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			switch c.Kind() {
			case "string_fragment":
				b.WriteString(c.Utf8Text(src))
			case "escape_sequence":
				b.WriteString(unescape(c.Utf8Text(src)))
			}
		}
		return b.String(), true
	case "template_string":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if n.NamedChild(i).Kind() == "template_substitution" {
				return "", false
			}
		}
		t := n.Utf8Text(src)
		return strings.TrimSuffix(strings.TrimPrefix(t, "`"), "`"), true
	}
	return "", false
}

func unescape(s string) string {
	switch s {
	case `\n`:
		return "\n"
	case `\t`:
		return "\t"
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
