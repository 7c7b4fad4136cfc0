package python

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// The gates' rules in Python's words (pkg/validators asks for them as
// capabilities): Python's tests are held to the rules every language's
// are: no skip, xfail or deselection added, no assertion removed or
// edited, no test deleted, no conftest.py changed (its hooks decide what
// every test below it runs and reports), no pytest configuration changed,
// and no code that asks whether pytest is running (detect.go) or singles
// out a failing test's values (special.go). The regression gate runs the
// test modules importing a change (imports.go).

var (
	// skipRE matches what skips a test or keeps pytest from collecting
	// it: marks (skip, skipif, xfail, as decorators or pytestmark),
	// pytest.skip(), unittest's skips, __test__ = False, collect_ignore.
	skipRE = regexp.MustCompile(`(^|\W)mark\.(skip|skipif|xfail)\b|(^|\W)pytest\.(skip|xfail|importorskip)\s*(\(|\.)|(^|\W)unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|^@(skip|skipIf|skipUnless|expectedFailure)\b|\.skipTest\s*\(|\bSkipTest\b|^__test__\s*=|\bcollect_ignore(_glob)?\b|--deselect\b`)
	// assertRE matches the lines that make a Python test fail: assert
	// statements, pytest.raises/warns/fail/approx, unittest's
	// self.assert…/self.fail…, mocks' and libraries' assert_…(), raise
	// AssertionError.
	assertRE = regexp.MustCompile(`^assert\b|(^|\W)pytest\.(raises|warns|fail|approx|deprecated_call)\b|(^|\W)self\.(assert|fail)\w*\s*\(|(^|\W|\.)assert_\w+\s*\(|\braise\s+AssertionError\b`)
	// testDefRE matches a test function or a test class.
	testDefRE = regexp.MustCompile(`^(?:async\s+)?def\s+(test\w*)\s*\(|^class\s+(Test\w*)\s*[(:]`)
)

// Runner is "pytest", for the gates' evidence.
func (Driver) Runner(string) string { return "pytest" }

// ChecksName names the static checks in the gates' evidence.
func (Driver) ChecksName() string { return "compile and pyflakes" }

// TestEditViolations are what a patch may not do to a Python test file
// even when the policy allows test edits: add a skip, remove an
// assertion (or edit a line of one over several lines), change a
// conftest.py.
func (Driver) TestEditViolations(dir string, f unidiff.File, _ []unidiff.File) []string {
	p := f.Path()
	if !strings.HasSuffix(p, ".py") {
		return nil
	}
	bad := multilineAsserts(dir, f)
	if path.Base(p) == "conftest.py" {
		bad = append(bad, fmt.Sprintf("%s: %s pytest's conftest.py (its fixtures and hooks decide what the tests below it run and report)", p, f.Verb()))
	}
	return append(bad, gaterules.EditedLines(p, f.Changes(), gaterules.Added(f), lineRules)...)
}

// lineRules are the skips and assertions a test file's changed lines show.
var lineRules = gaterules.LineRules{Skip: skipRE.MatchString, Assert: assertRE.MatchString, Skips: "a skip"}

// multilineAsserts names the assert statements over several lines that
// the test file held before the patch and no longer holds as they were,
// both sides read with tree-sitter.
func multilineAsserts(dir string, f unidiff.File) []string {
	if f.OldPath == "" || f.NewPath == "" {
		return nil
	}
	before, after, ok := gaterules.Sides(dir, f)
	if !ok {
		return nil
	}
	return gaterules.EditedAssertions(f.OldPath, asserts(before), asserts(after))
}

// asserts are the assert statements of a file.
func asserts(src []byte) []gaterules.Assertion {
	t, ok := parse(src)
	if !ok {
		return nil
	}
	defer t.close()
	var out []gaterules.Assertion
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() != "assert_statement" {
			return true
		}
		out = append(out, gaterules.AssertionOf(n.Utf8Text(src), lineOf(n)))
		return false
	})
	return out
}

// DeletedTests names the test functions and classes the patch removes
// from Python test files and does not add back anywhere.
func (Driver) DeletedTests(_ string, patch []unidiff.File, isTest func(string) bool) []string {
	keep := func(p string) bool { return strings.HasSuffix(p, ".py") && isTest(p) }
	return gaterules.DeletedDefs(patch, keep, func(l string) string {
		if m := testDefRE.FindStringSubmatch(l); m != nil {
			return m[1] + m[2]
		}
		return ""
	})
}

// configFiles hold pytest's configuration (pyproject.toml, setup.cfg and
// tox.ini among other things).
var configFiles = map[string]bool{"pytest.ini": true, ".pytest.ini": true, "pyproject.toml": true, "setup.cfg": true, "tox.ini": true}

// configRE matches the lines of pytest's configuration that decide which
// tests run and how their outcomes count.
var configRE = regexp.MustCompile(`^\[(pytest|tool:pytest|tool\.pytest[\w.]*)\]|^(addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|collect_ignore\w*|usefixtures|xfail_strict|filterwarnings|markers|required_plugins|minversion)\s*=|--deselect|--ignore|(^|\s)-p\s*no:|(^|\s)-k\s`)

// RunnerConfigViolations are the changes of a patch to pytest's
// configuration: what decides which tests run is not the code's to change.
func (Driver) RunnerConfigViolations(_ string, f unidiff.File) []string {
	p := f.Path()
	if !configFiles[path.Base(p)] {
		return nil
	}
	if path.Base(p) == "pytest.ini" || path.Base(p) == ".pytest.ini" {
		return []string{fmt.Sprintf("%s: %s pytest's configuration (it decides which tests run and how they count)", p, f.Verb())}
	}
	var bad []string
	for _, l := range f.Changes() {
		if t := gaterules.Norm(l.Text); configRE.MatchString(t) {
			what := "adds"
			if l.Removed() {
				what = "removes"
			}
			bad = append(bad, fmt.Sprintf("%s:%d: %s pytest configuration (it decides which tests run and how they count): %s", p, l.Number(), what, t))
		}
	}
	return bad
}

// DeclarationRule is how the revert gate reads Python: the function,
// class or module constant a line declares; # comments (and //, as the
// gate always read them).
func (Driver) DeclarationRule(rel string) (func(string) string, []string, bool) {
	if !strings.HasSuffix(rel, ".py") {
		return nil, nil, false
	}
	return gaterules.Declares(declREs), []string{"#", "//"}, true
}

// declREs find the name a line of Python declares.
var declREs = []*regexp.Regexp{
	regexp.MustCompile(`^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(`),
	regexp.MustCompile(`^\s*class\s+([A-Za-z_]\w*)\b`),
	regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)\s*(?::[^=]*)?=`),
}
