package validators

import (
	"github.com/redfix/redfix/pkg/repoconfig"

	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// integrity rejects patches that make tests pass by changing the tests, the
// build or the CI rather than the code.
func (v *Validators) integrity(_ context.Context, c *candidate) (task.Gate, error) {
	if c.parseErr != nil {
		return fail(fmt.Sprintf("the patch cannot be read as a unified diff: %v", c.parseErr)), nil
	}
	if len(c.files) == 0 {
		return fail("the patch changes no file"), nil
	}
	if bad := v.outOfBounds(c.files); len(bad) > 0 {
		c.refused = true
		return fail(fmt.Sprintf("the patch is refused unread (no parser saw it): %d violation(s):\n- %s", len(bad), strings.Join(bad, "\n- "))), nil
	}
	var bad []string
	for _, f := range c.files {
		bad = append(bad, v.fileViolations(c, f)...)
	}
	bad = append(bad, c.testViolations()...)
	if len(bad) > 0 {
		return fail(fmt.Sprintf("%d violation(s):\n- %s", len(bad), strings.Join(bad, "\n- "))), nil
	}
	tests := 0
	var kept []string // protected files the patch may change
	for _, f := range c.files {
		if c.isTestFile(f.Path()) {
			tests++
		}
		for _, p := range f.Paths() {
			if pp, ok := classifyProtected(p); ok {
				how := "named by the allowed paths"
				switch {
				case v.policyNames(p, pp):
				case path.Base(p) == "go.sum":
					how = "checksums added or dropped only"
				default:
					how = "dependency versions only"
				}
				kept = append(kept, fmt.Sprintf("%s (%s)", p, how))
			}
		}
	}
	detail := fmt.Sprintf("%d file(s) changed", len(c.files))
	if tests > 0 {
		detail += fmt.Sprintf(", %d of them test files (allowed by policy); no test deleted or skipped, no assertion removed", tests)
	}
	if len(kept) > 0 {
		detail += "; protected files it may change: " + strings.Join(kept, ", ")
	}
	if tests == 0 && len(kept) == 0 {
		detail += ", no test, build or CI file touched"
	}
	return pass(detail), nil
}

func (v *Validators) fileViolations(c *candidate, f unidiff.File) []string {
	dir := c.in.Dir
	bad := v.protectedViolations(dir, f)
	for _, p := range f.Paths() {
		if !v.allowed(p) {
			bad = append(bad, fmt.Sprintf("%s: outside the allowed paths (%s)", p, strings.Join(v.cfg.AllowedPaths, ", ")))
		}
	}
	if r, ok := c.driver().(RunnerConfig); ok {
		bad = append(bad, r.RunnerConfigViolations(dir, f)...)
	}
	p := f.Path()
	test := c.isTestFile(p)
	helper := !test && c.isTestHelper(p)
	if !test && !helper {
		return bad
	}
	if c.isTestData(p) && f.OldPath != "" && !c.isSource(p) {
		// Expected output: changing it changes what the tests demand.
		what := "changes"
		if f.NewPath == "" {
			what = "deletes"
		}
		bad = append(bad, fmt.Sprintf("%s: %s test data the tests compare with (expected output)", p, what))
	}
	if !helper && !v.cfg.AllowTestEdits {
		what := "edits test file"
		switch {
		case f.NewPath == "":
			what = "deletes test file"
		case f.OldPath == "":
			what = "adds test file"
		}
		bad = append(bad, fmt.Sprintf("%s: %s (test edits are not allowed for this repository)", p, what))
	}
	// What is checked even when test edits are allowed.
	if r, ok := c.driver().(TestEditRules); ok {
		bad = append(bad, r.TestEditViolations(dir, f, c.files)...)
	}
	return bad
}

// testViolations are the driver's rules on the patch as a whole: the
// tests it deletes, the code it adds to detect the tests, and the code
// it adds to single out the failing tests' values.
func (c *candidate) testViolations() []string {
	var bad []string
	d := c.driver()
	if r, ok := d.(TestDeletions); ok {
		bad = append(bad, r.DeletedTests(c.in.Dir, c.files, c.isTestFile)...)
	}
	if r, ok := d.(TestDetection); ok {
		bad = append(bad, r.DetectsTests(c.in.Dir, c.files, c.isTestFile)...)
	}
	if r, ok := d.(SpecialCasing); ok {
		bad = append(bad, r.SpecialCases(c.in.Dir, c.files, c.in.Task.Tests(), c.isTestFile)...)
	}
	return bad
}

// goTestEditViolations are Go's rules on a test file or a helper: no
// skip or build constraint added, no assertion removed.
func goTestEditViolations(dir string, f unidiff.File) []string {
	p := f.Path()
	if !strings.HasSuffix(p, ".go") {
		return nil
	}
	helper := !isTestFile(p) && isTestHelper(dir, p)
	var bad []string
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
		case l.Added() && skipRE.MatchString(t):
			bad = append(bad, fmt.Sprintf("%s:%d: adds a skip: %s", p, l.Number(), t))
		case l.Added() && strings.HasPrefix(t, "//go:build") || l.Added() && strings.HasPrefix(t, "// +build"):
			bad = append(bad, fmt.Sprintf("%s:%d: adds a build constraint to a test file: %s", p, l.Number(), t))
		case l.Removed() && assertionRE.MatchString(t) && !added[t] && helper:
			bad = append(bad, fmt.Sprintf("%s:%d: removes a check from a test helper: %s", p, l.Number(), t))
		case l.Removed() && assertionRE.MatchString(t) && !added[t]:
			bad = append(bad, fmt.Sprintf("%s:%d: removes an assertion: %s", p, l.Number(), t))
		}
	}
	return bad
}

var (
	// skipRE matches calls that skip a test: t.Skip(…), b.SkipNow(), s.T().Skipf(…).
	skipRE = regexp.MustCompile(`\.Skip(Now|f)?\(`)
	// assertionRE matches the lines that make a test fail: t.Error…, t.Fatal…,
	// t.Fail…, testify's assert/require, and the if that guards them.
	assertionRE = regexp.MustCompile(`(^|\W)\w+\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(|(^|\W)(assert|require)\.\w+\(|^if .*\{$|^} else if .*\{$`)
	// testFuncRE matches a test, benchmark, fuzz target or example.
	testFuncRE = regexp.MustCompile(`^func\s+((Test|Benchmark|Fuzz|Example)\w*)\s*\(`)
)

// deletedTests names test functions the patch removes and does not add back
// anywhere (a rename to an unexported name counts as a deletion).
func deletedTests(files []unidiff.File) []string {
	added := map[string]bool{}
	type where struct {
		file string
		line int
	}
	removed := map[string]where{}
	for _, f := range files {
		if !strings.HasSuffix(f.Path(), "_test.go") {
			continue
		}
		for _, l := range f.Changes() {
			m := testFuncRE.FindStringSubmatch(norm(l.Text))
			if m == nil {
				continue
			}
			if l.Added() {
				added[m[1]] = true
			} else if _, ok := removed[m[1]]; !ok {
				removed[m[1]] = where{f.OldPath, l.Number()}
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

// isTestFile reports test sources and test data (golden files): changing
// them changes what the tests check.
func isTestFile(p string) bool {
	if strings.HasSuffix(p, "_test.go") {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "testdata" {
			return true
		}
	}
	return false
}

// isTestHelper reports Go files that are not _test.go files but serve the
// tests: in a testutil-like package (testutil, testhelpers, footest,
// internal/testing), under testdata, or importing "testing".
func isTestHelper(dir, p string) bool {
	if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
		return false
	}
	for _, seg := range strings.Split(path.Dir(p), "/") {
		switch {
		case seg == "testdata", seg == "testing", seg == "testutil", seg == "testutils",
			strings.HasPrefix(seg, "testhelper"), strings.HasSuffix(seg, "test") && seg != "test" && seg != "latest" && seg != "contest":
			return true
		}
	}
	data, err := readBeneath(dir, p, maxSourceBytes)
	if err != nil {
		return false
	}
	return importsTestingRE.Match(data)
}

// importsTestingRE matches an import of "testing" in a Go file.
var importsTestingRE = regexp.MustCompile(`(?m)^\s*(import\s+)?(\w+\s+)?"testing"\s*$`)

// allowed reports whether p matches one of the allowed globs (all paths when
// there are none).
func (v *Validators) allowed(p string) bool {
	if len(v.cfg.AllowedPaths) == 0 {
		return true
	}
	for _, g := range v.cfg.AllowedPaths {
		if repoconfig.Match(g, p) {
			return true
		}
	}
	return false
}

// norm is a line without its indentation and trailing spaces.
func norm(s string) string { return strings.TrimSpace(s) }
