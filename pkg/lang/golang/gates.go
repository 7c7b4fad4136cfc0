package golang

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// The gates' rules in Go's words (pkg/validators asks for them as
// capabilities): no test deleted or skipped, no build constraint added to
// a test file, no assertion removed from a test or a test helper, no code
// that detects go test (detect.go) or singles out a failing test's values
// (special.go), no module file changed but a dependency's version
// (protected.go); the static gate builds the module, vets the changed
// packages and checks their formatting (static.go); the regression gate
// runs the packages whose tests depend on the change (regression.go).

var (
	// skipRE matches calls that skip a test: t.Skip(…), b.SkipNow(), s.T().Skipf(…).
	skipRE = regexp.MustCompile(`\.Skip(Now|f)?\(`)
	// assertionRE matches the lines that make a test fail: t.Error…, t.Fatal…,
	// t.Fail…, testify's assert/require, and the if that guards them.
	assertionRE = regexp.MustCompile(`(^|\W)\w+\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(|(^|\W)(assert|require)\.\w+\(|^if .*\{$|^} else if .*\{$`)
	// testFuncRE matches a test, benchmark, fuzz target or example.
	testFuncRE = regexp.MustCompile(`^func\s+((Test|Benchmark|Fuzz|Example)\w*)\s*\(`)
)

// GuardsAsTest: the test files (a _test.go file, anything under
// testdata), which the integrity gate guards; what else IsTestData names
// (vendor, hidden and "_" directories) is not the tests'.
func (d Driver) GuardsAsTest(rel string) bool { return d.IsTestFile(rel) }

// IsTestHelper reports a Go file that is not a _test.go file but serves
// the tests: in a testutil-like package (testutil, testhelpers, footest,
// internal/testing), under testdata, or importing "testing".
func (Driver) IsTestHelper(dir, p string) bool {
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
	data, err := gaterules.Read(dir, p)
	if err != nil {
		return false
	}
	return importsTestingRE.Match(data)
}

// importsTestingRE matches an import of "testing" in a Go file.
var importsTestingRE = regexp.MustCompile(`(?m)^\s*(import\s+)?(\w+\s+)?"testing"\s*$`)

// TestEditViolations are what a patch may not do to a Go test file or
// helper even when the policy allows test edits: add a skip or a build
// constraint, remove an assertion (a check, from a helper).
func (d Driver) TestEditViolations(dir string, f unidiff.File, _ []unidiff.File) []string {
	p := f.Path()
	if !strings.HasSuffix(p, ".go") {
		return nil
	}
	helper := !d.IsTestFile(p) && d.IsTestHelper(dir, p)
	var bad []string
	added := gaterules.Added(f)
	for _, l := range f.Changes() {
		t := gaterules.Norm(l.Text)
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

// DeletedTests names test functions the patch removes and does not add
// back anywhere (a rename to an unexported name counts as a deletion).
func (Driver) DeletedTests(_ string, patch []unidiff.File, _ func(string) bool) []string {
	keep := func(p string) bool { return strings.HasSuffix(p, "_test.go") }
	return gaterules.DeletedDefs(patch, keep, func(l string) string {
		if m := testFuncRE.FindStringSubmatch(l); m != nil {
			return m[1]
		}
		return ""
	})
}

// Runner is "go test", for the gates' evidence.
func (Driver) Runner(string) string { return "go test" }

// RepeatedRuns is the go test command running the tests count times.
func (Driver) RepeatedRuns(count int) string { return fmt.Sprintf("go test -count=%d", count) }

// DeclarationRule is how the revert gate reads Go code: the function,
// method, type, variable or constant a line declares; // comments.
func (Driver) DeclarationRule(rel string) (func(string) string, []string, bool) {
	if !strings.HasSuffix(rel, ".go") {
		return nil, nil, false
	}
	return gaterules.Declares(declREs), []string{"//"}, true
}

// declREs find the name a line of Go declares.
var declREs = []*regexp.Regexp{
	regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[\[(]`),
	regexp.MustCompile(`^(?:type|var|const)\s+([A-Za-z_]\w*)\b`),
}
