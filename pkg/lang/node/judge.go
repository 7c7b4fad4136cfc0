package node

import (
	"path"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/quote"
	"github.com/redfix/redfix/pkg/untrusted"
)

// The judge's context of a JavaScript or TypeScript test (pkg/judge asks
// for it as a capability), named "FILE::NAME" (NAME its describe blocks'
// titles and its own joined by " > "): the test's own call (it or test,
// with its callback) and the beforeEach and beforeAll hooks of the
// describe blocks around it and of its file. Each is quoted from its own
// text only, whole or cut at a line boundary with a marker: never into a
// neighbouring test.

// QuoteTest quotes the test id: its call, then the hooks of the suites
// around it, outermost first; then the data files its strings name. A
// test the driver cannot resolve (a name its file does not hold
// literally) is looked for by its canonical id; a whole file of tests has
// no one test to quote.
func (d Driver) QuoteTest(dir, id string) []quote.Source {
	file, name := "", ""
	if t, err := d.Resolve(dir, id); err == nil {
		file, name = t.ImportPath, t.Test
	} else if f, n, ok := strings.Cut(id, "::"); ok {
		file, name = f, n
	}
	if name == "" || !isSourceExt(path.Ext(file)) {
		return nil
	}
	return quoteTest(dir, file, name)
}

// hookSuite is a describe block (or the file, its title empty) and the
// hooks called directly in it.
type hookSuite struct {
	title string
	outer *hookSuite
	hooks [][2]uint // the hooks' byte ranges
}

// hookedTest is a test call, its suite, and its byte range.
type hookedTest struct {
	names      []string
	suite      *hookSuite
	start, end uint
	line       int
}

// quoteTest quotes the test name of file. Without a test of that full
// name, a test whose title alone is name's last part stands in when it is
// the only one.
func quoteTest(dir, file, name string) []quote.Source {
	src, err := untrusted.ReadText(dir, file, quote.MaxSourceFile)
	if err != nil {
		return nil
	}
	t, ok := parseTree(file, []byte(src))
	if !ok {
		return nil
	}
	defer t.close()
	var tests []hookedTest
	walkHooked(t.root(), t.src, &hookSuite{}, &tests)
	hit := findTest(tests, name)
	if hit == nil {
		return nil
	}
	text := quote.Range(src, hit.start, hit.end, quote.MaxTest*2/3)
	var chain []*hookSuite
	for s := hit.suite; s != nil; s = s.outer {
		chain = append([]*hookSuite{s}, chain...)
	}
	for _, s := range chain {
		for _, h := range s.hooks {
			left := quote.MaxTest - len(text) - 2
			if left < 200 {
				text += "\n\n[… more hooks not shown …]"
				break
			}
			text += "\n\n" + quote.Range(src, h[0], h[1], left)
		}
	}
	out := []quote.Source{{Name: strings.Join(hit.names, " > ") + " (" + file + ":" + strconv.Itoa(hit.line) + ")", Text: text}}
	return append(out, quote.DataFiles(dir, path.Dir(file), quote.Strings(text))...)
}

// findTest is the test of the full name, else the only one whose own
// title is its last part.
func findTest(tests []hookedTest, name string) *hookedTest {
	for i, t := range tests {
		if strings.Join(t.names, " > ") == name {
			return &tests[i]
		}
	}
	want := strings.Split(name, " > ")
	var hit *hookedTest
	for i, t := range tests {
		if t.names[len(t.names)-1] == want[len(want)-1] {
			if hit != nil {
				return nil // more than one: not this test's source for sure
			}
			hit = &tests[i]
		}
	}
	return hit
}

// walkHooked finds the suites, tests and hooks under n, in suite.
func walkHooked(n *sitter.Node, src []byte, suite *hookSuite, out *[]hookedTest) {
	if n.Kind() == "call_expression" {
		fn, title, ok := namedCall(n, src)
		switch {
		case ok && testFuncs[fn]:
			var names []string
			for s := suite; s != nil; s = s.outer {
				if s.title != "" {
					names = append([]string{s.title}, names...)
				}
			}
			start, end := stmtRange(n)
			*out = append(*out, hookedTest{names: append(names, title), suite: suite, start: start, end: end, line: lineOf(n)})
			return // a test's body holds no tests
		case ok && suiteFuncs[fn]:
			inner := &hookSuite{title: title, outer: suite}
			if args := n.ChildByFieldName("arguments"); args != nil {
				walkHookedChildren(args, src, inner, out)
			}
			return
		case hookFuncs[fn]:
			start, end := stmtRange(n)
			suite.hooks = append(suite.hooks, [2]uint{start, end})
			return
		}
	}
	walkHookedChildren(n, src, suite, out)
}

func walkHookedChildren(n *sitter.Node, src []byte, suite *hookSuite, out *[]hookedTest) {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if c := n.NamedChild(i); c != nil {
			walkHooked(c, src, suite, out)
		}
	}
}

// namedCall is the function a call names (its object's name for it.only
// or describe.skip; none for it.each(…)(…), whose titles are made at run
// time) and, when ok, its first argument's literal text.
func namedCall(n *sitter.Node, src []byte) (fn, title string, ok bool) {
	f := n.ChildByFieldName("function")
	for f != nil && f.Kind() == "member_expression" {
		if p := f.ChildByFieldName("property"); p != nil && p.Utf8Text(src) == "each" {
			return "", "", false
		}
		f = f.ChildByFieldName("object")
	}
	if f == nil || f.Kind() != "identifier" {
		return "", "", false
	}
	fn = f.Utf8Text(src)
	args := n.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return fn, "", false
	}
	title, ok = literal(args.NamedChild(0), src)
	return fn, title, ok
}

// stmtRange is the byte range of a call with the statement it makes (its
// ";" included).
func stmtRange(n *sitter.Node) (uint, uint) {
	if p := n.Parent(); p != nil && p.Kind() == "expression_statement" {
		return p.StartByte(), p.EndByte()
	}
	return n.StartByte(), n.EndByte()
}
