package node

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// The gates' rules in the words of jest, vitest, mocha and node:test
// (pkg/validators asks for them as capabilities): JavaScript's and
// TypeScript's tests are held to the rules every language's are: no skip
// or focus added (a focused test skips every other one), no assertion
// removed or edited, no test deleted, no snapshot changed (a snapshot is
// test data), no runner configuration or setup file changed (config.go),
// no code that asks whether a runner is running it (detect.go) or singles
// out a failing test's values (special.go). The regression gate runs the
// test files importing a change (imports.go).

var (
	// skipRE matches what skips a test or focuses one (which skips the
	// others): .skip, .only, .todo, .skipIf, .runIf, .fails on the
	// suites, tests and benchmarks (describe.skip.each,
	// it.concurrent.only too), the x- and f-prefixed forms, mocha's
	// this.skip(), node:test's and vitest's t.skip()/t.todo(), jasmine's
	// pending().
	skipRE = regexp.MustCompile(`(^|[^\w$.])(` + funcNames(false, suiteFuncs, testFuncs, benchFuncs) + `)(\.\w+)*\.(skip|only|todo|skipIf|runIf|fails)\b|(^|[^\w$.])(` + funcNames(true, suiteFuncs, testFuncs) + `)\s*(\(|\.)|(^|[^\w$.])(this|t|ctx|context)\.(skip|todo)\s*\(|(^|[^\w$.])pending\s*\(`)
	// assertRE matches the lines that make a JavaScript test fail:
	// expect(…) and its matchers (jest's, vitest's, chai's), assert and
	// assert.* (node's, chai's, sinon's, t.assert), should chains,
	// expectTypeOf, a thrown AssertionError, fail(…).
	assertRE = regexp.MustCompile(`(^|[^\w$])(expect|expectTypeOf|assertType)\s*[(.]|(^|[^\w$])assert(\.\w+)*\s*\(|\.should\b|(^|[^\w$.])should[.(]|\bnew\s+(assert\.)?AssertionError\b|(^|[^\w$.])fail\s*\(`)
)

// funcNames writes the functions of the sets as a regular expression's
// alternatives: their x- and f-prefixed forms when prefixed, else the
// others.
func funcNames(prefixed bool, sets ...map[string]bool) string {
	var names []string
	for _, m := range sets {
		for n := range m {
			if (n[0] == 'x' || n[0] == 'f') == prefixed {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

// ChecksName names the static checks in the gates' evidence.
func (Driver) ChecksName() string {
	return "the node driver's checks (tsc, eslint, where the project has them)"
}

// TestEditViolations are what a patch may not do to a JavaScript or
// TypeScript test file even when the policy allows test edits: add a skip
// or a focus, remove or edit an assertion. A removed line the patch adds
// back in any of its files is moved, not removed (a test moved to a file
// of its own).
func (Driver) TestEditViolations(dir string, f unidiff.File, patch []unidiff.File) []string {
	p := f.Path()
	if !isSourceExt(path.Ext(p)) {
		return nil
	}
	bad := treeViolations(dir, f)
	return append(bad, gaterules.EditedLines(p, f.Changes(), gaterules.Added(patch...), lineRules)...)
}

// lineRules are the skips, focuses and assertions a test file's changed
// lines show.
var lineRules = gaterules.LineRules{Skip: skipRE.MatchString, Assert: assertRE.MatchString, Comment: isComment, Skips: "a skip or a focus"}

// isComment reports a line that is a comment, or inside a block comment.
func isComment(t string) bool {
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
}

// treeViolations reads the test file before and after the patch with
// tree-sitter: the assertions over several lines the file held and no
// longer holds as they were (one edited on a line but its first, which the
// line rule does not see: a matcher on a line of its own, an inline
// snapshot's text), and the options that skip a test (node:test's and
// vitest's { skip: … }, { todo: … }, { only: … }) the patch adds.
func treeViolations(dir string, f unidiff.File) []string {
	before, after, ok := gaterules.Sides(dir, f)
	if !ok {
		return nil
	}
	var bad []string
	var now []gaterules.Assertion
	if f.NewPath != "" {
		if t, ok := parseTree(f.NewPath, after); ok {
			now = asserts(t)
			bad = append(bad, optionSkips(t, f)...)
			t.close()
		}
	}
	if f.OldPath != "" && f.NewPath != "" {
		if t, ok := parseTree(f.OldPath, before); ok {
			bad = append(bad, gaterules.EditedAssertions(f.OldPath, asserts(t), now)...)
			t.close()
		}
	}
	return bad
}

// asserts are the assertion statements of a file: expression statements
// whose call chain starts at expect, assert, expectTypeOf or assertType,
// or goes through .should or .assert (awaited ones too).
func asserts(t tree) []gaterules.Assertion {
	var out []gaterules.Assertion
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() != "expression_statement" || n.NamedChildCount() == 0 || !isAssertion(n.NamedChild(0), t.src) {
			return true
		}
		out = append(out, gaterules.AssertionOf(t.text(n), lineOf(n)))
		return false
	})
	return out
}

// assertRoots are the names an assertion's chain starts at.
var assertRoots = map[string]bool{"expect": true, "assert": true, "expectTypeOf": true, "assertType": true, "should": true}

func isAssertion(n *sitter.Node, src []byte) bool {
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
			return assertRoots[n.Utf8Text(src)]
		default:
			return false
		}
	}
	return false
}

// optionSkips are the skip, todo and only options (of any value but
// false) the patch adds to the tests' and suites' calls.
func optionSkips(t tree, f unidiff.File) []string {
	added := map[int]bool{}
	for _, l := range f.Changes() {
		if l.Added() {
			added[l.NewLine] = true
		}
	}
	var bad []string
	for _, c := range testCalls(t) {
		args := c.call.ChildByFieldName("arguments")
		for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
			obj := args.NamedChild(i)
			if obj.Kind() != "object" {
				continue
			}
			for j := uint(0); j < obj.NamedChildCount(); j++ {
				pair := obj.NamedChild(j)
				key, value, ok := option(t, pair)
				if ok && (key == "skip" || key == "todo" || key == "only") && value != "false" && value != "undefined" && added[lineOf(pair)] {
					bad = append(bad, fmt.Sprintf("%s:%d: adds a skip or a focus: %s in the options of %s", f.NewPath, lineOf(pair), gaterules.OneLine(t.text(pair), 80), c.full))
				}
			}
		}
	}
	return bad
}

// option is an object member's key and value as written.
func option(t tree, pair *sitter.Node) (key, value string, ok bool) {
	switch pair.Kind() {
	case "pair":
		k, v := pair.ChildByFieldName("key"), pair.ChildByFieldName("value")
		if k == nil || v == nil {
			return "", "", false
		}
		return strings.Trim(t.text(k), `'"`), t.text(v), true
	case "shorthand_property_identifier":
		return t.text(pair), t.text(pair), true
	}
	return "", "", false
}

// DeletedTests names the tests and suites the patch removes from
// JavaScript and TypeScript test files and does not add back anywhere:
// the files are read before and after the patch, and a title that fewer
// calls declare after it than before is a deletion (a test moved to
// another file or suite keeps its title).
func (Driver) DeletedTests(dir string, patch []unidiff.File, isTest func(string) bool) []string {
	type where struct {
		file, full string
		line       int
	}
	before := map[string][]where{}
	after := map[string]int{}
	afterFull := map[string]bool{}
	for _, f := range patch {
		if !isSourceExt(path.Ext(f.Path())) || !isTest(f.Path()) {
			continue
		}
		b, a, ok := gaterules.Sides(dir, f)
		if !ok {
			continue
		}
		if f.OldPath != "" {
			if t, ok := parseTree(f.OldPath, b); ok {
				for _, c := range testCalls(t) {
					before[c.title] = append(before[c.title], where{f.OldPath, c.full, lineOf(c.call)})
				}
				t.close()
			}
		}
		if f.NewPath != "" {
			if t, ok := parseTree(f.NewPath, a); ok {
				for _, c := range testCalls(t) {
					after[c.title]++
					afterFull[c.full] = true
				}
				t.close()
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

// DeclarationRule is how the revert gate reads JavaScript and TypeScript:
// the function, class, interface, type, enum, variable or method a line
// declares; // comments.
func (Driver) DeclarationRule(rel string) (func(string) string, []string, bool) {
	if !isSourceExt(path.Ext(rel)) {
		return nil, nil, false
	}
	return gaterules.Declares(declREs), []string{"//"}, true
}

// declREs find the name a line of JavaScript or TypeScript declares.
var declREs = []*regexp.Regexp{
	regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]`),
	regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)\b`),
	regexp.MustCompile(`^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)\b`),
	regexp.MustCompile(`^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\b`),
	regexp.MustCompile(`^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::[^{]*)?\{\s*$`),
}
