package validators

import (
	"context"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is what the gates need of a repository's language driver (a
// lang.Driver is one): naming and running its tests, its static checks,
// and telling its tests and test data from its code. The caller chooses it
// once per job, from the checkout (lang.Drivers.For), and passes it in
// Input.Lang.
type Language interface {
	// Name names the language ("go", "python"): the gates hold each
	// language's tests to that language's rules (its skips, assertions
	// and test detection).
	Name() string
	Resolve(dir, id string) (testrun.Target, error)
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error)
	IsTestFile(rel string) bool
	IsTestData(rel string) bool
}

// The languages whose rules the gates know; another driver's tests are
// held to its IsTestFile and IsTestData only.
const (
	langGo     = "go"
	langPython = "python"
	langNode   = "node" // JavaScript and TypeScript
)

// goLanguage is Go as the gates knew it before the seam: the gates' own
// runner, testrun's names, and the gates' Go rules for test files. It is
// the language of an Input without one.
type goLanguage struct{ TestRunner }

func (goLanguage) Name() string { return langGo }

func (goLanguage) Resolve(dir, id string) (testrun.Target, error) { return golang.Resolve(dir, id) }

func (goLanguage) Check(context.Context, string, []string) ([]findings.Finding, error) {
	return nil, nil // Go's static gate runs its own checks (staticChecks)
}

func (goLanguage) IsTestFile(rel string) bool { return isTestFile(rel) }
func (goLanguage) IsTestData(rel string) bool { return isTestData(rel) }

// language is the candidate's language: Input.Lang, or Go with the gates'
// runner.
func (v *Validators) language(in Input) Language {
	if in.Lang != nil {
		return in.Lang
	}
	return goLanguage{v.runner}
}

// driver is the candidate's language; a candidate made without one (as
// the cheap gates' tests make them) is Go's.
func (c *candidate) driver() Language {
	if c.lang == nil {
		return goLanguage{}
	}
	return c.lang
}

// isGo reports the Go rules: Go's static checks, its packages' dependents,
// go test's names.
func (c *candidate) isGo() bool { return c.driver().Name() == langGo }

func (c *candidate) isPython() bool { return c.driver().Name() == langPython }

func (c *candidate) isNode() bool { return c.driver().Name() == langNode }

// isTestFile reports a file the integrity gate guards as a test: the
// driver's test files, and its test data too (fixtures and snapshots
// outside tests/ are what the tests compare with); for JavaScript and
// TypeScript, the test runners' configuration and setup files as well
// (jsRunnerFile). For Go, the gates' rule as it always was (test data is
// under testdata, a test file).
func (c *candidate) isTestFile(p string) bool {
	if c.isGo() {
		return isTestFile(p)
	}
	return c.driver().IsTestFile(p) || c.isTestData(p) || c.isNode() && jsRunnerFile(p)
}

// isTestData reports a file the tests read or compare with: the driver's,
// and for JavaScript and TypeScript every snapshot (a .snap file or one
// under __snapshots__), wherever the driver places it.
func (c *candidate) isTestData(p string) bool {
	return c.driver().IsTestData(p) || c.isNode() && jsSnapshot(p)
}

// isSource reports a file of the language's code (a test file that is
// code may be edited when the policy allows; test data may not).
func (c *candidate) isSource(p string) bool {
	switch c.driver().Name() {
	case langGo:
		return strings.HasSuffix(p, ".go")
	case langPython:
		return strings.HasSuffix(p, ".py")
	case langNode:
		return isJSSource(p)
	}
	return false
}

// testTool names the test command in the gates' evidence: for
// JavaScript and TypeScript the checkout's runner when the driver names it
// (runnerNamer), else "node tests".
func (c *candidate) testTool() string {
	switch c.driver().Name() {
	case langGo:
		return "go test"
	case langPython:
		return "pytest"
	}
	if r, ok := c.driver().(runnerNamer); ok {
		if name := r.Runner(c.in.Dir); name != "" {
			return name
		}
	}
	return c.driver().Name() + " tests"
}

// runnerNamer is a driver that names the test runner of a checkout
// ("vitest", "jest", "mocha", "node:test").
type runnerNamer interface {
	Runner(dir string) string
}

// jsSetupFiles are the setup files the checkout's runner configuration
// names (jsSetupFiles), read once per candidate.
func (c *candidate) jsSetupFiles() map[string]bool {
	if c.jsSetup == nil {
		c.jsSetup = jsSetupFiles(c.in.Dir)
	}
	return c.jsSetup
}
