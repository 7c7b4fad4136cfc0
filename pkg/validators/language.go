package validators

import (
	"context"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/protected"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Language is what the gates need of every repository's language driver (a
// lang.Driver is one): naming and running its tests, its static checks,
// and telling its tests, its test data and its code apart. The caller
// chooses it once per job, from the checkout (lang.Drivers.For), and passes
// it in Input.Lang.
//
// The language's own rules are capabilities a driver may implement, the
// small interfaces below, each asked for with a type assertion. The gates
// never ask a driver's name: where a capability is absent they fall back
// to what every driver has (its test files and test data, its tests run,
// its checks), and a rule the driver does not state is not checked.
type Language interface {
	// Name names the driver ("python"), for the evidence only.
	Name() string
	Resolve(dir, id string) (testrun.Target, error)
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error)
	IsTestFile(rel string) bool
	IsTestData(rel string) bool
	IsSource(rel string) bool
}

// The integrity gate's capabilities: what a patch may not do to the tests.
// isTest, where a method takes it, reports a file the gate guards as a
// test (see TestGuard).
type (
	// TestGuard is a driver that says which files the integrity gate
	// guards as tests, when that is not every test file and test data
	// file of its (Go's test data names directories the go command
	// ignores, which are not tests).
	TestGuard interface {
		GuardsAsTest(rel string) bool
	}
	// TestHelpers is a driver with files that serve the tests without
	// being test files (a package of test helpers): they are held to the
	// test edit rules too.
	TestHelpers interface {
		IsTestHelper(dir, rel string) bool
	}
	// TestEditRules is a driver that says what a patch may not do to one
	// of its test files (or helpers) even when test edits are allowed:
	// add a skip, remove or weaken an assertion. patch is the whole
	// patch (a line it moves to another file is not removed).
	TestEditRules interface {
		TestEditViolations(dir string, f unidiff.File, patch []unidiff.File) []string
	}
	// TestDeletions is a driver that names the tests a patch deletes.
	TestDeletions interface {
		DeletedTests(dir string, patch []unidiff.File, isTest func(string) bool) []string
	}
	// TestDetection is a driver that names the code a patch adds to ask
	// whether the tests are running, and how it asks.
	TestDetection interface {
		DetectsTests(dir string, patch []unidiff.File, isTest func(string) bool) []string
	}
	// SpecialCasing is a driver that names the code a patch adds to
	// single out a value the failing tests (by id) spell out.
	SpecialCasing interface {
		SpecialCases(dir string, patch []unidiff.File, failing []string, isTest func(string) bool) []string
	}
	// RunnerConfig is a driver whose test runner's configuration (the
	// files and settings that decide which tests run and how they count)
	// no patch may change, whatever the policy on test edits: the
	// evidence against an edit of f, in the checkout at dir.
	RunnerConfig interface {
		RunnerConfigViolations(dir string, f unidiff.File) []string
	}
	// EmbeddedTests is a driver whose code files may hold tests of their
	// own (doctests): the lines of them a patch to the code file f
	// changes or removes, each named. What they expect is what the tests
	// demand, as test data's expected output is: no patch may change
	// them, whatever the policy on test edits (one may add new ones).
	EmbeddedTests interface {
		EmbeddedTestEdits(dir string, f unidiff.File) []string
	}
	// ProtectedFiles is a driver with protected files of its language's
	// (its module files, its linters' configuration), checked before the
	// common kinds.
	ProtectedFiles interface {
		ProtectedFiles() []protected.Kind
	}
)

// The revert gate's capability.
type (
	// Declarations is a driver that reads its code line by line for the
	// revert gate: for the file rel, the name a line declares ("" for
	// none) and the prefixes its line comments start with; ok false for a
	// file that is not code. Without it, the driver's source files are
	// code that declares nothing.
	Declarations interface {
		DeclarationRule(rel string) (declared func(line string) string, comments []string, ok bool)
	}
)

// The static gate's capabilities.
type (
	// StaticGate is a driver with a static gate of its own: the checks of
	// the patch's change on the checkout at dir (the patched one, then
	// the base), and what they were, for the evidence. Without it the
	// gate runs the driver's Check on the changed files.
	StaticGate interface {
		StaticCheck(ctx context.Context, dir string, patch []unidiff.File) ([]findings.Finding, string, error)
	}
	// ChecksNamer names the driver's checks in the evidence ("compile and
	// pyflakes").
	ChecksNamer interface {
		ChecksName() string
	}
)

// The oracle's and the regression gate's capabilities.
type (
	// RunnerNamer is a driver that names the test runner of a checkout
	// ("pytest", "vitest"); "" when it cannot tell.
	RunnerNamer interface {
		Runner(dir string) string
	}
	// RepeatedRuns is a driver that names the command running the tests
	// count times ("go test -count=3").
	RepeatedRuns interface {
		RepeatedRuns(count int) string
	}
	// Regression is a driver that chooses the regression gate's
	// packages: first those whose tests run whatever the budget (the
	// changed ones, the failing tests'), then, when dependents is true,
	// those whose tests depend on the change, nearest first. An error
	// finding the dependents leaves first usable. RegressionTerms words
	// the evidence: why nothing ran, and what the dependents are.
	// Without it the gate runs the failing tests' files and the test
	// files the patch changes.
	Regression interface {
		RegressionScope(ctx context.Context, dir string, patch []unidiff.File, failing []string, dependents bool) (first, deps []string, err error)
		RegressionTerms() (none, dependents string)
	}
	// PackageFailures is a driver whose packages are not the files its
	// tests are named by: it says which of the packages that ran (batch) a
	// failing test's id is of (all of them when it cannot tell), and
	// whether a package is in a checkout.
	PackageFailures interface {
		PackageOfFailure(dir, id string, batch []string) []string
		HasPackage(dir, pkg string) bool
	}
)
