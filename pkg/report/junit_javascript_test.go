package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// checkClean fails when a failure keeps the CI machine's checkout path or a
// colour code (what would make its fingerprint differ between machines).
func checkClean(t *testing.T, fs []task.Failure) {
	t.Helper()
	for _, f := range fs {
		for _, s := range append([]string{f.Package, f.Message, f.Output}, f.Frames...) {
			if strings.Contains(s, "/home/runner") || strings.Contains(s, "\x1b") || strings.Contains(s, "[31m") {
				t.Errorf("%s keeps a machine path or a colour code: %q", f.ID(), s)
			}
		}
	}
}

// vitest names the file and "describe > title": the canonical id as it is.
// A file that does not load (a missing import, a syntax error) is a build
// failure of the file, its message without the checkout's path or colours.
func TestParseJUnitVitest(t *testing.T) {
	res := parseFile(t, "vitest.xml")
	if res.Total != 6 || !slices.Equal(res.Passed, []string{"src/price.test.ts::price > adds nothing at zero", "src/price.test.ts::top level passes"}) ||
		!slices.Equal(res.Skipped, []string{"src/cart.test.ts::skipped one"}) {
		t.Errorf("total %d passed %q skipped %q", res.Total, res.Passed, res.Skipped)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "src/cart.test.ts::cart totals", message: "expected { a: 1, b: [ 1, 2 ] } to deeply equal { a: 1, b: [ 1, 3 ] }",
			frames: []string{"src/cart.test.ts:3"}, outputHas: "+     2,"},
		{id: "src/price.test.ts::price > discount > applies the discount", message: "expected 91 to be 90 // Object.is equality",
			frames: []string{"src/price.test.ts:10"}, outputHas: "+ 91"},
		{id: "src/price.test.ts::price > rejects a negative total", message: "negative total: -1",
			frames: []string{"src/price.ts:7", "src/price.test.ts:14"}, outputHas: "RangeError"},
	})
	checkClean(t, res.Failures)
	checkBuilds(t, res.BuildErrors, map[string]string{
		"src/broken.test.ts": "Cannot find module './nowhere' imported from src/broken.test.ts",
		"src/syntax.test.ts": "Transform failed with 1 error:\n\n[PARSE_ERROR] Expected `,` or `)` but found `;`",
	})
	checkClean(t, res.BuildErrors)
	if fr := res.BuildErrors[1].Frames; !slices.Equal(fr, []string{"src/syntax.test.ts:3"}) {
		t.Errorf("the syntax error's frames %q, want its code frame's location (vite's own left out)", fr)
	}
}

// checkBuilds checks that the build failures are of the files, in order,
// each with its message starting as given.
func checkBuilds(t *testing.T, got []task.Failure, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d build failures, want %d: %+v", len(got), len(want), got)
	}
	for _, f := range got {
		msg, ok := want[f.Package]
		if !ok || f.Test != "" || !strings.HasPrefix(f.Message, msg) {
			t.Errorf("build failure %q (test %q): %q, want one of %q starting %q", f.Package, f.Test, f.Message, f.Package, msg)
		}
	}
}

// jest-junit's default templates name no file ("describe title" in both
// classname and name): the test is named by its suite (the file's first
// describe block, "undefined" when it has none) and its full name, which
// the Node driver resolves. jest writes no message: the assertion's is its
// error's text (Expected and Received), not the first line of the output.
func TestParseJUnitJestDefaultTemplates(t *testing.T) {
	res := parseFile(t, "jest-junit-default.xml")
	if res.Total != 6 || !slices.Equal(res.Passed, []string{"price.price adds nothing at zero", "price.top level passes"}) {
		t.Errorf("total %d passed %q", res.Total, res.Passed)
	}
	root := "/home/runner/work/shop/shop/"
	checkFailures(t, res.Failures, []failure{
		{id: "price.price discount applies the discount", message: "expect(received).toBe(expected) // Object.is equality; Expected: 90; Received: 91",
			frames: []string{root + "src/price.test.js:9"}, outputHas: "jest-circus"},
		{id: "price.price rejects a negative total", message: "RangeError: negative total: -1",
			frames: []string{root + "src/price.js:7", root + "src/price.test.js:13"}, outputHas: "at checkTotal"},
		{id: "undefined.cart totals", message: "expect(received).toEqual(expected) // deep equality",
			frames: []string{root + "src/cart.test.js:2"}, outputHas: "Object {"},
	})
}

// jest-junit with the file attribute and "{classname}"/"{title}": the
// canonical id, the ancestors joined as the id joins them; the stack's
// absolute paths made relative (the file attribute shows the root); a
// suite that failed to run is one build failure of its file, with the
// error's own message.
func TestParseJUnitJestFileAttribute(t *testing.T) {
	res := parseFile(t, "jest-junit-file.xml")
	if res.Total != 6 || !slices.Equal(res.Passed, []string{"src/price.test.js::price > adds nothing at zero", "src/price.test.js::top level passes"}) {
		t.Errorf("total %d passed %q", res.Total, res.Passed)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "src/price.test.js::price > discount > applies the discount", message: "expect(received).toBe(expected) // Object.is equality; Expected: 90; Received: 91",
			frames: []string{"src/price.test.js:9"}, outputHas: "(src/price.test.js:9:33)"},
		{id: "src/price.test.js::price > rejects a negative total", message: "RangeError: negative total: -1",
			frames: []string{"src/price.js:7", "src/price.test.js:13"}},
		{id: "src/cart.test.js::cart totals", message: "expect(received).toEqual(expected) // deep equality",
			frames: []string{"src/cart.test.js:2"}},
	})
	checkClean(t, res.Failures)
	checkBuilds(t, res.BuildErrors, map[string]string{
		"src/syntax.test.js": `SyntaxError: src/syntax.test.js: Unexpected token, expected "," (2:18)`,
		"src/broken.test.js": "Cannot find module './nowhere' from 'src/broken.test.js'",
	})
	checkClean(t, res.BuildErrors)
	if fr := res.BuildErrors[1].Frames; !slices.Equal(fr, []string{"src/broken.test.js:1"}) {
		t.Errorf("frames %q, want the require's line (jest-resolve's left out)", fr)
	}
}

// jest-junit with "{classname}" and "{title}" and no file: a test in nested
// describe blocks (jest's " › " between them) is named by its full name,
// which the Node driver resolves; the others by classname and title.
func TestParseJUnitJestClassnameTemplate(t *testing.T) {
	res := parseFile(t, "jest-junit-classname.xml")
	if res.Total != 6 || !slices.Equal(res.Passed, []string{"price.adds nothing at zero", "price.top level passes"}) {
		t.Errorf("total %d passed %q", res.Total, res.Passed)
	}
	var ids []string
	for _, f := range res.Failures {
		ids = append(ids, f.ID())
	}
	if want := []string{"price > discount > applies the discount", "price.rejects a negative total", "undefined.cart totals"}; !slices.Equal(ids, want) {
		t.Errorf("failures %q, want %q", ids, want)
	}
}

// mocha-junit-reporter: the suite's absolute file made relative by the
// frames mocha writes relative; the full title split into the describe
// blocks' titles by the file's suites (the canonical name).
func TestParseJUnitMocha(t *testing.T) {
	res := parseFile(t, "mocha-junit-reporter.xml")
	if res.Total != 4 || !slices.Equal(res.Passed, []string{"mtest/price.spec.js::price > adds nothing at zero"}) {
		t.Errorf("total %d passed %q", res.Total, res.Passed)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "Root Suite.top level passes", message: "Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n    a: 1,\n    b: [\n      1,\n+     2\n-     3\n    ]\n  }",
			frames: []string{"mtest/price.spec.js:19"}},
		{id: "mtest/price.spec.js::price > rejects a negative total", message: "negative total: -1",
			frames: []string{"src/price.js:7", "mtest/price.spec.js:14"}},
		{id: "mtest/price.spec.js::price > discount > applies the discount", message: "Expected values to be strictly equal:\n\n91 !== 90",
			frames: []string{"mtest/price.spec.js:10"}, outputHas: "+90"},
	})
	checkClean(t, res.Failures)
}

// node:test's JUnit: describe blocks are nested suites (their names joined
// into the test's), top-level tests are outside any suite, and a file that
// fails to run is a top-level case named by its absolute path: a build
// failure of the file, with no message (triage's build gives it one). Its stack frames, file:// URLs among them, lose the
// scheme and node's internal frames.
func TestParseJUnitNodeTest(t *testing.T) {
	res := parseFile(t, "node-test.xml")
	if res.Total != 6 || !slices.Equal(res.Passed, []string{"price > adds nothing at zero"}) || !slices.Equal(res.Skipped, []string{"skipped one"}) {
		t.Errorf("total %d passed %q skipped %q", res.Total, res.Passed, res.Skipped)
	}
	root := "/home/runner/work/shop/shop/"
	checkFailures(t, res.Failures, []failure{
		{id: "price > rejects a negative total", message: "negative total: -1",
			frames: []string{root + "src/price.js:7", root + "ntest/price.test.js:15"}},
		{id: "price > discount > applies the discount", message: "Expected values to be strictly equal:91 !== 90",
			frames: []string{root + "ntest/price.test.js:11"}},
		{id: "top level fails deep", message: "Expected values to be strictly deep-equal:+ actual - expected  {    a: 1,    b: [      1,+     2-     3    ]  }",
			frames: []string{root + "ntest/price.test.js:20"}},
		{id: "total keeps cents", message: "6 == 5", frames: []string{root + "ntest/total.test.mjs:8"}},
	})
	checkBuilds(t, res.BuildErrors, map[string]string{
		root + "ntest/broken.test.js": "",
		root + "ntest/syntax.test.js": "",
	})
	for _, f := range res.BuildErrors {
		if f.Message != "" {
			t.Errorf("%s: message %q, want none (node:test says no more than that it failed)", f.Package, f.Message)
		}
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[31mexpected\x1b[39m 3 to be 2":         "expected 3 to be 2",
		"[31m[PARSE_ERROR] [0mExpected `,`":          "[PARSE_ERROR] Expected `,`",
		"[38;5;246m╭[0m[38;5;246m─[0m src/a.ts:3:19": "╭─ src/a.ts:3:19",
		"index [3] out of range, want [m] or [1]":    "index [3] out of range, want [m] or [1]",
	} {
		if got := StripANSI(in); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}

// The roots a report shows are learnt from JavaScript files only: a Go
// failure whose absolute frame ends in a file another frame names bare
// keeps its frames as go test printed them.
func TestRelativeToReportJavaScriptOnly(t *testing.T) {
	res := Result{Failures: []task.Failure{
		{Package: "example.com/m/tbl", Test: "TestTable", Frames: []string{"/ci/m/tbl/tbl.go:5", "tbl.go:9"}},
		{Package: "src/a.test.js", Test: "a > b", Frames: []string{"/ci/m/src/a.test.js:3", "/ci/m/src/a.js:7"}},
	}}
	relativeToReport(&res)
	if got := res.Failures[0].Frames; !slices.Equal(got, []string{"/ci/m/tbl/tbl.go:5", "tbl.go:9"}) {
		t.Errorf("Go's frames %q", got)
	}
	if got := res.Failures[1].Frames; !slices.Equal(got, []string{"src/a.test.js:3", "src/a.js:7"}) {
		t.Errorf("JavaScript's frames %q, want them relative to /ci/m/", got)
	}
}
