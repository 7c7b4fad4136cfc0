package node

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
)

// testCalls are how the gates read a test file: every call of a suite, a
// test or a benchmark function (describe, it, test, bench, their x- and
// f- forms) through any chain of modifiers (it.concurrent.only,
// describe.each(table)), named by its title, a title that is not a
// literal by its source text. declaredTests, which names the tests the
// runner reports, reads only literal titles.

// testDecl is a call of a suite, test or benchmark function, with a title.
type testDecl struct {
	title string // its own title
	full  string // the titles of its suites and its own, joined by " > "
	call  *sitter.Node
	suite bool
}

// modifiers are what may follow a test function in its chain.
var modifiers = map[string]bool{
	"each": true, "skip": true, "only": true, "todo": true, "concurrent": true, "sequential": true,
	"skipIf": true, "runIf": true, "fails": true, "shuffle": true, "for": true, "failing": true,
}

// testCalls are the tests and suites a file declares, in order.
func testCalls(t tree) []testDecl {
	var out []testDecl
	var visit func(n *sitter.Node, prefix string)
	visit = func(n *sitter.Node, prefix string) {
		if n.Kind() == "call_expression" {
			if c, ok := readTestCall(n, t.src); ok {
				c.full = prefix + c.title
				out = append(out, c)
				if args := n.ChildByFieldName("arguments"); args != nil {
					for i := uint(1); i < args.NamedChildCount(); i++ {
						visit(args.NamedChild(i), c.full+" > ")
					}
				}
				return
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			visit(n.NamedChild(i), prefix)
		}
	}
	visit(t.root(), "")
	return out
}

// readTestCall reads a call as a test or a suite.
func readTestCall(n *sitter.Node, src []byte) (testDecl, bool) {
	name := callee(n, src)
	parts := strings.Split(name, ".")
	if name == "" || !(suiteFuncs[parts[0]] || testFuncs[parts[0]] || benchFuncs[parts[0]]) {
		return testDecl{}, false
	}
	for _, m := range parts[1:] {
		if !modifiers[m] {
			return testDecl{}, false
		}
	}
	args := n.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return testDecl{}, false
	}
	first := args.NamedChild(0)
	title, ok := literal(first, src)
	if !ok {
		switch first.Kind() {
		case "identifier", "member_expression", "template_string", "binary_expression":
			title = gaterules.OneLine(first.Utf8Text(src), 120)
		default:
			return testDecl{}, false
		}
	}
	return testDecl{title: title, call: n, suite: suiteFuncs[parts[0]]}, true
}

// callee is the name a call is made through, its member chain written
// out ("it", "describe.skip", "expect.soft", "test.each"), with the calls
// of a chain dropped: it.each(table)("title", fn) is "it.each". Other
// callees give "".
func callee(call *sitter.Node, src []byte) string {
	fn := call.ChildByFieldName("function")
	var parts []string
	for fn != nil {
		switch fn.Kind() {
		case "identifier", "this":
			parts = append(parts, fn.Utf8Text(src))
			fn = nil
		case "member_expression":
			if p := fn.ChildByFieldName("property"); p != nil {
				parts = append(parts, p.Utf8Text(src))
			}
			fn = fn.ChildByFieldName("object")
		case "call_expression":
			fn = fn.ChildByFieldName("function")
		default:
			return ""
		}
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}
