package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
)

// adapt is the driver, or Go with the rules the gates still hold for it
// for an input without a driver (the next step moves them into the Go
// driver).
func adapt(l Language) Language {
	if l == nil {
		return goLanguage{}
	}
	return l
}

// goLanguage is Go as the gates knew it before the seam: the gates' own
// runner, testrun's names, and the gates' Go rules. It is the language of
// an Input without one.
type goLanguage struct{ TestRunner }

func (goLanguage) Name() string { return "go" }

func (goLanguage) Resolve(dir, id string) (testrun.Target, error) { return testrun.Resolve(dir, id) }

func (goLanguage) Check(context.Context, string, []string) ([]findings.Finding, error) {
	return nil, nil // Go's static gate runs its own checks (StaticCheck)
}

func (goLanguage) IsTestFile(rel string) bool   { return isTestFile(rel) }
func (goLanguage) IsTestData(rel string) bool   { return isTestData(rel) }
func (goLanguage) IsSource(rel string) bool     { return strings.HasSuffix(rel, ".go") }
func (goLanguage) GuardsAsTest(rel string) bool { return isTestFile(rel) }
func (goLanguage) IsTestHelper(dir, rel string) bool {
	return isTestHelper(dir, rel)
}

func (goLanguage) TestEditViolations(dir string, f unidiff.File, _ []unidiff.File) []string {
	return goTestEditViolations(dir, f)
}

func (goLanguage) DeletedTests(_ string, patch []unidiff.File, _ func(string) bool) []string {
	return deletedTests(patch)
}

func (goLanguage) DetectsTests(dir string, patch []unidiff.File, _ func(string) bool) []string {
	return detectsTests(dir, patch)
}

func (goLanguage) SpecialCases(dir string, patch []unidiff.File, failing []string, _ func(string) bool) []string {
	return specialCases(dir, patch, failingTestLiterals(dir, failing))
}

func (goLanguage) StaticCheck(ctx context.Context, dir string, patch []unidiff.File) ([]findings.Finding, string, error) {
	return goStaticCheck(ctx, dir, patch)
}

func (goLanguage) Runner(string) string { return "go test" }

func (goLanguage) RepeatedRuns(n int) string { return fmt.Sprintf("go test -count=%d", n) }

func (goLanguage) RegressionScope(ctx context.Context, dir string, patch []unidiff.File, failing []string, deps bool) ([]string, []string, error) {
	changed := goPackages(dir, patch)
	pkgs := map[string]bool{}
	for _, p := range changed {
		pkgs[p] = true
	}
	for _, id := range failing {
		if t, err := testrun.Resolve(dir, id); err == nil {
			pkgs[t.Dir] = true
		}
	}
	if len(pkgs) == 0 || len(changed) == 0 || !deps {
		return keys(pkgs), nil, nil
	}
	ds, err := dependents(ctx, dir, changed)
	if err != nil {
		return keys(pkgs), nil, fmt.Errorf("dependents of the changed packages: %w", err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Dir)
	}
	return keys(pkgs), out, nil
}

func (goLanguage) RegressionTerms() (string, string) {
	return "no Go package is changed or tested by the task", "dependent package(s)"
}

func (goLanguage) PackageOfFailure(dir, id string, batch []string) []string {
	return packageOfFailure(id, batch, dir)
}

func (goLanguage) HasPackage(dir, p string) bool { return hasGoFiles(dirOf(dir, p)) }
