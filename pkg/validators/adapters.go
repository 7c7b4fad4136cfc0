package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
)

// adapt is the driver with the rules the gates still hold for it: Go's
// for an input without a driver, JavaScript's for the node driver. (The
// next steps move them into the drivers.)
func adapt(l Language) Language {
	switch {
	case l == nil:
		return goLanguage{}
	case l.Name() == "node":
		if _, ok := l.(nodeLanguage); !ok {
			return nodeLanguage{l}
		}
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

// nodeLanguage is the node driver with the gates' JavaScript and
// TypeScript rules.
type nodeLanguage struct{ Language }

// IsTestData: the driver's, and every snapshot (a .snap file or one under
// __snapshots__), wherever the driver places it.
func (n nodeLanguage) IsTestData(p string) bool { return n.Language.IsTestData(p) || jsSnapshot(p) }

// GuardsAsTest: test files, test data, and the runners' configuration and
// setup files.
func (n nodeLanguage) GuardsAsTest(p string) bool {
	return n.Language.IsTestFile(p) || n.IsTestData(p) || jsRunnerFile(p)
}

func (n nodeLanguage) Runner(dir string) string {
	if r, ok := n.Language.(RunnerNamer); ok {
		return r.Runner(dir)
	}
	return ""
}

func (nodeLanguage) RunnerConfigViolations(dir string, f unidiff.File) []string {
	bad := jsConfigViolations(dir, f)
	if p := f.Path(); !jsRunnerFile(p) && jsSetupFiles(dir)[p] {
		bad = append(bad, fmt.Sprintf("%s: %s a setup file the test runner's configuration names (it runs before the tests and decides what they see)", p, f.Verb()))
	}
	return bad
}

func (nodeLanguage) TestEditViolations(dir string, f unidiff.File, patch []unidiff.File) []string {
	if !isJSSource(f.Path()) {
		return nil
	}
	return jsTestFileViolations(dir, f, patch)
}

func (nodeLanguage) DeletedTests(dir string, patch []unidiff.File, isTest func(string) bool) []string {
	return jsDeletedTests(dir, patch, isTest)
}

func (nodeLanguage) DetectsTests(_ string, patch []unidiff.File, isTest func(string) bool) []string {
	return jsDetectsTests(patch, isTest)
}

func (n nodeLanguage) SpecialCases(dir string, patch []unidiff.File, failing []string, isTest func(string) bool) []string {
	return jsSpecialCases(dir, patch, isTest, jsTestLiterals(dir, n.Language, failing))
}

func (nodeLanguage) ChecksName() string {
	return "the node driver's checks (tsc, eslint, where the project has them)"
}

func (n nodeLanguage) RegressionScope(_ context.Context, dir string, patch []unidiff.File, failing []string, deps bool) ([]string, []string, error) {
	isTestModule := func(p string) bool { return isJSSource(p) && n.Language.IsTestFile(p) && !jsRunnerFile(p) }
	first, changed := gaterules.TestFiles(dir, patch, failing, n.Resolve, n.IsSource, isTestModule)
	if len(changed) == 0 || !deps {
		return keys(first), nil, nil
	}
	mods, err := jsImportGraph(dir)
	if err != nil {
		return keys(first), nil, fmt.Errorf("importers of the changed modules: %w", err)
	}
	return keys(first), gaterules.Dirs(jsImporters(mods, changed, isTestModule, first)), nil
}

func (nodeLanguage) RegressionTerms() (string, string) {
	return "no test is named by the task, changed, or imports a changed module", "test file(s) importing the changed modules"
}
