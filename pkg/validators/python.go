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

// Python's tests are held to the rules Go's are, in Python's words: no
// skip, xfail or deselection added, no assertion removed or edited, no test
// deleted, no conftest.py changed (its hooks decide what every test below
// it runs and reports), and no code that asks whether pytest is running.

var (
	// pySkipRE matches what skips a test or keeps pytest from collecting
	// it: marks (skip, skipif, xfail, as decorators or pytestmark),
	// pytest.skip(), unittest's skips, __test__ = False, collect_ignore.
	pySkipRE = regexp.MustCompile(`(^|\W)mark\.(skip|skipif|xfail)\b|(^|\W)pytest\.(skip|xfail|importorskip)\s*(\(|\.)|(^|\W)unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|^@(skip|skipIf|skipUnless|expectedFailure)\b|\.skipTest\s*\(|\bSkipTest\b|^__test__\s*=|\bcollect_ignore(_glob)?\b|--deselect\b`)
	// pyAssertRE matches the lines that make a Python test fail: assert
	// statements, pytest.raises/warns/fail/approx, unittest's
	// self.assert…/self.fail…, mocks' and libraries' assert_…(), raise
	// AssertionError.
	pyAssertRE = regexp.MustCompile(`^assert\b|(^|\W)pytest\.(raises|warns|fail|approx|deprecated_call)\b|(^|\W)self\.(assert|fail)\w*\s*\(|(^|\W|\.)assert_\w+\s*\(|\braise\s+AssertionError\b`)
	// pyTestDefRE matches a test function or a test class.
	pyTestDefRE = regexp.MustCompile(`^(?:async\s+)?def\s+(test\w*)\s*\(|^class\s+(Test\w*)\s*[(:]`)
)

// pyTestFileViolations are what a patch may not do to a Python test file
// even when the policy allows test edits.
func pyTestFileViolations(dir string, f unidiff.File) []string {
	p := f.Path()
	bad := pyMultilineAsserts(dir, f)
	if path.Base(p) == "conftest.py" {
		bad = append(bad, fmt.Sprintf("%s: %s pytest's conftest.py (its fixtures and hooks decide what the tests below it run and report)", p, editVerb(f)))
	}
	added := map[string]bool{} // a removed line added back is a move
	changes := f.Changes()
	for _, l := range changes {
		if l.Added() {
			added[norm(l.Text)] = true
		}
	}
	for _, l := range changes {
		t := norm(l.Text)
		switch {
		case l.Added() && pySkipRE.MatchString(t):
			bad = append(bad, fmt.Sprintf("%s:%d: adds a skip: %s", p, l.Number(), t))
		case l.Removed() && pyAssertRE.MatchString(t) && !added[t]:
			bad = append(bad, fmt.Sprintf("%s:%d: removes an assertion: %s", p, l.Number(), t))
		}
	}
	return bad
}

// pyMultilineAsserts names the assert statements over several lines that
// the test file held before the patch and no longer holds as they were
// (one edited on a line of its own but the first, which the line rule does
// not see): the file before is rebuilt from the one after by undoing the
// patch, both are read with tree-sitter.
func pyMultilineAsserts(dir string, f unidiff.File) []string {
	if f.OldPath == "" || f.NewPath == "" {
		return nil
	}
	after, err := readBeneath(dir, f.NewPath, maxSourceBytes)
	if err != nil {
		return nil
	}
	before, err := undo(string(after), f)
	if err != nil {
		return nil
	}
	now := map[string]int{}
	for _, a := range pyAsserts(after) {
		now[a.text]++
	}
	var bad []string
	for _, a := range pyAsserts([]byte(before)) {
		if now[a.text] > 0 {
			now[a.text]--
			continue
		}
		if a.multiline {
			bad = append(bad, fmt.Sprintf("%s:%d: removes or edits an assertion: %s", f.OldPath, a.line, a.first))
		}
	}
	return bad
}

// pyAssert is an assert statement of a file.
type pyAssert struct {
	text      string // its text, blanks collapsed
	first     string // its first line
	line      int
	multiline bool
}

func pyAsserts(src []byte) []pyAssert {
	tree, ok := parsePy(src)
	if !ok {
		return nil
	}
	defer tree.close()
	var out []pyAssert
	walkPy(tree.root(), func(n *sitter.Node) bool {
		if n.Kind() != "assert_statement" {
			return true
		}
		text := n.Utf8Text(src)
		first, _, _ := strings.Cut(text, "\n")
		out = append(out, pyAssert{
			text: strings.Join(strings.Fields(text), " "), first: norm(first), line: line(n),
			multiline: n.EndPosition().Row > n.StartPosition().Row,
		})
		return false
	})
	return out
}

// pyDeletedTests names the test functions and classes the patch removes
// from Python test files and does not add back anywhere.
func pyDeletedTests(files []unidiff.File, isTest func(string) bool) []string {
	type where struct {
		file string
		line int
	}
	added := map[string]bool{}
	removed := map[string]where{}
	for _, f := range files {
		if !strings.HasSuffix(f.Path(), ".py") || !isTest(f.Path()) {
			continue
		}
		for _, l := range f.Changes() {
			m := pyTestDefRE.FindStringSubmatch(norm(l.Text))
			if m == nil {
				continue
			}
			name := m[1] + m[2]
			if l.Added() {
				added[name] = true
			} else if _, ok := removed[name]; !ok {
				removed[name] = where{f.OldPath, l.Number()}
			}
		}
	}
	var bad []string
	for name, w := range removed {
		if !added[name] {
			bad = append(bad, fmt.Sprintf("%s:%d: deletes test %s", w.file, w.line, name))
		}
	}
	sort.Strings(bad)
	return bad
}

// pyConfigFiles hold pytest's configuration (pyproject.toml, setup.cfg and
// tox.ini among other things).
var pyConfigFiles = map[string]bool{"pytest.ini": true, ".pytest.ini": true, "pyproject.toml": true, "setup.cfg": true, "tox.ini": true}

// pyConfigRE matches the lines of pytest's configuration that decide
// which tests run and how their outcomes count.
var pyConfigRE = regexp.MustCompile(`^\[(pytest|tool:pytest|tool\.pytest[\w.]*)\]|^(addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|collect_ignore\w*|usefixtures|xfail_strict|filterwarnings|markers|required_plugins|minversion)\s*=|--deselect|--ignore|(^|\s)-p\s*no:|(^|\s)-k\s`)

// pyConfigViolations are the changes of a patch to pytest's configuration:
// what decides which tests run is not the code's to change.
func pyConfigViolations(f unidiff.File) []string {
	p := f.Path()
	if !pyConfigFiles[path.Base(p)] {
		return nil
	}
	if path.Base(p) == "pytest.ini" || path.Base(p) == ".pytest.ini" {
		return []string{fmt.Sprintf("%s: %s pytest's configuration (it decides which tests run and how they count)", p, editVerb(f))}
	}
	var bad []string
	for _, l := range f.Changes() {
		if t := norm(l.Text); pyConfigRE.MatchString(t) {
			what := "adds"
			if l.Removed() {
				what = "removes"
			}
			bad = append(bad, fmt.Sprintf("%s:%d: %s pytest configuration (it decides which tests run and how they count): %s", p, l.Number(), what, t))
		}
	}
	return bad
}
