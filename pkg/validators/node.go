package validators

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/unidiff"
)

// JavaScript's and TypeScript's tests are held to the rules Go's and
// Python's are, in the words of jest, vitest, mocha and node:test: no skip
// or focus added (a focused test skips every other one), no assertion
// removed or edited, no test deleted, no snapshot changed, no runner
// configuration or setup file changed (nodeconfig.go), and no code that
// asks whether a runner is running it.

var (
	// jsSkipRE matches what skips a test or focuses one (which skips the
	// others): .skip, .only, .todo, .skipIf, .runIf, .fails on describe,
	// it, test and their aliases (describe.skip.each, it.concurrent.only
	// too), the x- and f-prefixed forms, mocha's this.skip(), node:test's
	// and vitest's t.skip()/t.todo(), jasmine's pending().
	jsSkipRE = regexp.MustCompile(`(^|[^\w$.])(describe|context|suite|it|test|specify|bench)(\.\w+)*\.(skip|only|todo|skipIf|runIf|fails)\b|(^|[^\w$.])(xit|xdescribe|xtest|xcontext|xspecify|xsuite|fit|fdescribe|ftest|fcontext)\s*(\(|\.)|(^|[^\w$.])(this|t|ctx|context)\.(skip|todo)\s*\(|(^|[^\w$.])pending\s*\(`)
	// jsAssertRE matches the lines that make a JavaScript test fail:
	// expect(…) and its matchers (jest's, vitest's, chai's), assert and
	// assert.* (node's, chai's, sinon's, t.assert), should chains,
	// expectTypeOf, a thrown AssertionError, fail(…).
	jsAssertRE = regexp.MustCompile(`(^|[^\w$])(expect|expectTypeOf|assertType)\s*[(.]|(^|[^\w$])assert(\.\w+)*\s*\(|\.should\b|(^|[^\w$.])should[.(]|\bnew\s+(assert\.)?AssertionError\b|(^|[^\w$.])fail\s*\(`)
)

// jsSnapshot reports a snapshot file: what a toMatchSnapshot compares with.
func jsSnapshot(p string) bool {
	if strings.HasSuffix(p, ".snap") {
		return true
	}
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg == "__snapshots__" || seg == "__image_snapshots__" {
			return true
		}
	}
	return false
}

// jsTestFileViolations are what a patch may not do to a JavaScript or
// TypeScript test file even when the policy allows test edits: add a skip
// or a focus, remove or edit an assertion. A removed line the patch adds
// back in any of its files is moved, not removed (a test moved to a file
// of its own).
func jsTestFileViolations(dir string, f unidiff.File, all []unidiff.File) []string {
	p := f.Path()
	bad := jsTreeViolations(dir, f)
	added := map[string]bool{}
	for _, g := range all {
		for _, l := range g.Changes() {
			if l.Added() {
				added[norm(l.Text)] = true
			}
		}
	}
	for _, l := range f.Changes() {
		t := norm(l.Text)
		if jsComment(t) {
			continue
		}
		switch {
		case l.Added() && jsSkipRE.MatchString(t):
			bad = append(bad, fmt.Sprintf("%s:%d: adds a skip or a focus: %s", p, l.Number(), t))
		case l.Removed() && jsAssertRE.MatchString(t) && !added[t]:
			bad = append(bad, fmt.Sprintf("%s:%d: removes an assertion: %s", p, l.Number(), t))
		}
	}
	return bad
}

// jsComment reports a line that is a comment, or inside a block comment.
func jsComment(t string) bool {
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
}

// jsSides are a file's text before and after the patch: after read from
// the checkout, before rebuilt by undoing the patch (empty for a file the
// patch adds or deletes, on that side).
func jsSides(dir string, f unidiff.File) (before, after []byte, ok bool) {
	if f.NewPath != "" {
		var err error
		if after, err = readBeneath(dir, f.NewPath, maxSourceBytes); err != nil {
			return nil, nil, false
		}
	}
	if f.OldPath != "" {
		b, err := undo(string(after), f)
		if err != nil {
			return nil, nil, false
		}
		before = []byte(b)
	}
	return before, after, true
}

// jsTreeViolations reads the test file before and after the patch with
// tree-sitter: the assertions over several lines the file held and no
// longer holds as they were (one edited on a line but its first, which the
// line rule does not see: a matcher on a line of its own, an inline
// snapshot's text), and the options that skip a test (node:test's and
// vitest's { skip: … }, { todo: … }, { only: … }) the patch adds.
func jsTreeViolations(dir string, f unidiff.File) []string {
	before, after, ok := jsSides(dir, f)
	if !ok {
		return nil
	}
	var bad []string
	now := map[string]int{}
	if f.NewPath != "" {
		if tree, ok := parseJS(f.NewPath, after); ok {
			for _, a := range jsAsserts(tree) {
				now[a.text]++
			}
			bad = append(bad, jsOptionSkips(tree, f)...)
			tree.close()
		}
	}
	if f.OldPath != "" && f.NewPath != "" {
		if tree, ok := parseJS(f.OldPath, before); ok {
			for _, a := range jsAsserts(tree) {
				if now[a.text] > 0 {
					now[a.text]--
					continue
				}
				if a.multiline {
					bad = append(bad, fmt.Sprintf("%s:%d: removes or edits an assertion: %s", f.OldPath, a.line, a.first))
				}
			}
			tree.close()
		}
	}
	return bad
}

// jsAsserts are the assertion statements of a file: expression statements
// whose call chain starts at expect, assert, expectTypeOf or assertType,
// or goes through .should or .assert (awaited ones too).
func jsAsserts(tree jsTree) []pyAssert {
	var out []pyAssert
	walkJS(tree.root(), func(n *sitter.Node) bool {
		if n.Kind() != "expression_statement" || n.NamedChildCount() == 0 || !jsIsAssertion(n.NamedChild(0), tree.src) {
			return true
		}
		text := tree.text(n)
		first, _, _ := strings.Cut(text, "\n")
		out = append(out, pyAssert{
			text: strings.Join(strings.Fields(text), " "), first: norm(first), line: line(n),
			multiline: n.EndPosition().Row > n.StartPosition().Row,
		})
		return false
	})
	return out
}

// jsAssertRoots are the names an assertion's chain starts at.
var jsAssertRoots = map[string]bool{"expect": true, "assert": true, "expectTypeOf": true, "assertType": true, "should": true}

func jsIsAssertion(n *sitter.Node, src []byte) bool {
	for n != nil {
		switch n.Kind() {
		case "await_expression", "parenthesized_expression", "non_null_expression":
			if n.NamedChildCount() == 0 {
				return false
			}
			n = n.NamedChild(0)
		case "call_expression":
			n = n.ChildByFieldName("function")
		case "member_expression":
			if p := n.ChildByFieldName("property"); p != nil && (p.Utf8Text(src) == "should" || p.Utf8Text(src) == "assert") {
				return true
			}
			n = n.ChildByFieldName("object")
		case "identifier":
			return jsAssertRoots[n.Utf8Text(src)]
		default:
			return false
		}
	}
	return false
}

// jsOptionSkips are the skip, todo and only options (of any value but
// false) the patch adds to the tests' and suites' calls.
func jsOptionSkips(tree jsTree, f unidiff.File) []string {
	added := map[int]bool{}
	for _, l := range f.Changes() {
		if l.Added() {
			added[l.NewLine] = true
		}
	}
	var bad []string
	for _, t := range jsTests(tree) {
		args := t.call.ChildByFieldName("arguments")
		for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
			obj := args.NamedChild(i)
			if obj.Kind() != "object" {
				continue
			}
			for j := uint(0); j < obj.NamedChildCount(); j++ {
				pair := obj.NamedChild(j)
				var key, value string
				switch pair.Kind() {
				case "pair":
					k, v := pair.ChildByFieldName("key"), pair.ChildByFieldName("value")
					if k == nil || v == nil {
						continue
					}
					key, value = strings.Trim(tree.text(k), `'"`), tree.text(v)
				case "shorthand_property_identifier":
					key, value = tree.text(pair), tree.text(pair)
				default:
					continue
				}
				if (key == "skip" || key == "todo" || key == "only") && value != "false" && value != "undefined" && added[line(pair)] {
					bad = append(bad, fmt.Sprintf("%s:%d: adds a skip or a focus: %s in the options of %s", f.NewPath, line(pair), oneLineText(tree.text(pair), 80), t.full))
				}
			}
		}
	}
	return bad
}

// jsTest is a call of describe, it, test or one of their forms, with a
// title.
type jsTest struct {
	title string // its own title
	full  string // the titles of its suites and its own, joined by " > "
	call  *sitter.Node
	suite bool
}

var (
	// jsTestRoots are the functions that declare tests and suites;
	// jsSuiteRoots those of suites.
	jsTestRoots = map[string]bool{
		"describe": true, "context": true, "suite": true, "it": true, "test": true, "specify": true, "bench": true,
		"xit": true, "xdescribe": true, "xtest": true, "xcontext": true, "xspecify": true, "xsuite": true,
		"fit": true, "fdescribe": true, "ftest": true, "fcontext": true,
	}
	jsSuiteRoots = map[string]bool{"describe": true, "context": true, "suite": true, "xdescribe": true, "fdescribe": true, "xcontext": true, "fcontext": true, "xsuite": true}
	// jsTestModifiers are what may follow a test function in its chain.
	jsTestModifiers = map[string]bool{
		"each": true, "skip": true, "only": true, "todo": true, "concurrent": true, "sequential": true,
		"skipIf": true, "runIf": true, "fails": true, "shuffle": true, "for": true, "failing": true,
	}
)

// jsTests are the tests and suites a file declares, in order, named by
// their titles (a title that is not a literal by its source text).
func jsTests(tree jsTree) []jsTest {
	var out []jsTest
	var walk func(n *sitter.Node, prefix string)
	walk = func(n *sitter.Node, prefix string) {
		if n.Kind() == "call_expression" {
			if t, ok := jsTestCall(n, tree.src); ok {
				t.full = prefix + t.title
				out = append(out, t)
				if args := n.ChildByFieldName("arguments"); args != nil {
					for i := uint(1); i < args.NamedChildCount(); i++ {
						walk(args.NamedChild(i), t.full+" > ")
					}
				}
				return
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i), prefix)
		}
	}
	walk(tree.root(), "")
	return out
}

// jsTestCall reads a call as a test or a suite.
func jsTestCall(n *sitter.Node, src []byte) (jsTest, bool) {
	callee := jsCallee(n, src)
	parts := strings.Split(callee, ".")
	if callee == "" || !jsTestRoots[parts[0]] {
		return jsTest{}, false
	}
	for _, m := range parts[1:] {
		if !jsTestModifiers[m] {
			return jsTest{}, false
		}
	}
	args := n.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return jsTest{}, false
	}
	first := args.NamedChild(0)
	title, ok := jsStringText(first, src)
	if !ok {
		switch first.Kind() {
		case "identifier", "member_expression", "template_string", "binary_expression":
			title = oneLineText(first.Utf8Text(src), 120)
		default:
			return jsTest{}, false
		}
	}
	return jsTest{title: title, call: n, suite: jsSuiteRoots[parts[0]]}, true
}

// jsDeletedTests names the tests and suites the patch removes from
// JavaScript and TypeScript test files and does not add back anywhere:
// the files are read before and after the patch, and a title that fewer
// calls declare after it than before is a deletion (a test moved to
// another file or suite keeps its title).
func jsDeletedTests(dir string, files []unidiff.File, isTest func(string) bool) []string {
	type where struct {
		file, full string
		line       int
	}
	before := map[string][]where{}
	after := map[string]int{}
	afterFull := map[string]bool{}
	for _, f := range files {
		if !isJSSource(f.Path()) || !isTest(f.Path()) {
			continue
		}
		b, a, ok := jsSides(dir, f)
		if !ok {
			continue
		}
		if f.OldPath != "" {
			if tree, ok := parseJS(f.OldPath, b); ok {
				for _, t := range jsTests(tree) {
					before[t.title] = append(before[t.title], where{f.OldPath, t.full, line(t.call)})
				}
				tree.close()
			}
		}
		if f.NewPath != "" {
			if tree, ok := parseJS(f.NewPath, a); ok {
				for _, t := range jsTests(tree) {
					after[t.title]++
					afterFull[t.full] = true
				}
				tree.close()
			}
		}
	}
	var bad []string
	for title, ws := range before {
		missing := len(ws) - after[title]
		if missing <= 0 {
			continue
		}
		// Those whose full name is gone first: of two tests with one
		// title in two suites, the one whose suite lost it.
		sort.SliceStable(ws, func(i, j int) bool { return !afterFull[ws[i].full] && afterFull[ws[j].full] })
		for _, w := range ws[:missing] {
			bad = append(bad, fmt.Sprintf("%s:%d: deletes test %s", w.file, w.line, w.full))
		}
	}
	sort.Strings(bad)
	return bad
}
