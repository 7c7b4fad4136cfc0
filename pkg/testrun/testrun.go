// Package testrun is the vocabulary of the language seam's test runs, which
// every language driver (pkg/lang) speaks and every consumer reads: a test
// resolved to its canonical target, what a run of tests did (Outcome), the
// tests a package lists, and the lines the failing tests point at
// (Spectra). It runs nothing itself: the drivers run their tests.
package testrun

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// Target is a resolved test, or a package (Test is "") when the id names a
// package, a test file or a directory of tests: a build failure's "test" is
// its package, which passes when the package and its tests build and every
// test passes.
type Target struct {
	// ID is the canonical id, as the driver names the test in everything
	// it reports: a run's outcome names the test by this id too.
	ID string
	// ImportPath is the package (a Go import path, a test file) and Dir its
	// directory, relative to the checkout's root.
	ImportPath string
	Dir        string
	// Test is the test within the package; "" for the package.
	Test string
}

// IsPackage says the target is a whole package.
func (t Target) IsPackage() bool { return t.Test == "" }

// Func is the top-level test's name: Test up to its first '/'.
func (t Target) Func() string { name, _, _ := strings.Cut(t.Test, "/"); return name }

// ErrNotFound and ErrAmbiguous are returned by a driver's Resolve.
var (
	ErrNotFound  = errors.New("test not found")
	ErrAmbiguous = errors.New("test name is ambiguous")
)

// MaxSourceBytes is the largest source file a driver reads from a checkout
// to find tests in it; a larger one is passed over.
const MaxSourceBytes = 4 << 20

// Resolver turns a test as a report or a person names it into its
// canonical target (a language driver is one).
type Resolver interface {
	Resolve(dir, id string) (Target, error)
}

// Canonical resolves tests (as reports or people name them) in the checkout
// at dir with r, to their canonical ids, each once, in the order given. The
// error of the first that does not resolve is returned.
func Canonical(r Resolver, dir string, tests []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, t := range tests {
		target, err := r.Resolve(dir, t)
		if err != nil {
			return nil, err
		}
		if !seen[target.ID] {
			seen[target.ID] = true
			ids = append(ids, target.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("no test named")
	}
	return ids, nil
}

// Outcome is what one run of some tests did.
type Outcome struct {
	Passed []string       // canonical ids that passed every run
	Failed []task.Failure // tests whose own outcome was fail, one entry each
	Build  []task.Failure // packages that did not build
	// Missing are asked-for ids that did not run: unknown, or never
	// started, or started and cut off before they ended.
	Missing []string
	// Unknown says, for the asked-for names that no package defines (or
	// that several do), why they could not be run. They are in Missing too.
	Unknown []string
	// NotRun are tests that started but never ended, and did not cause
	// it: paused when a panic ended their test binary, for example.
	NotRun []string
	// Others are failures of tests that were not asked for but ran with
	// the asked ones: siblings of an asked subtest, or its parent failing
	// on its own.
	Others []task.Failure
	// Incomplete are packages whose run has no final result.
	Incomplete []string
	// Runs counts each test's runs by outcome (with count > 1 a test runs
	// several times), for the tests reported here.
	Runs map[string]report.Runs
	// Output is the runner's text output, head and tail kept.
	Output string
	// Invocations counts the runner's processes started.
	Invocations int
	TimedOut    bool
	Duration    time.Duration
}

// OK reports that every asked-for test ran and passed.
func (o Outcome) OK() bool {
	return len(o.Failed) == 0 && len(o.Build) == 0 && len(o.Missing) == 0 && !o.TimedOut
}

// Summary is a short human line.
func (o Outcome) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", len(o.Passed), len(o.Failed))
	if len(o.Build) > 0 {
		s += fmt.Sprintf(", %d packages did not build", len(o.Build))
	}
	if n := len(o.Missing) - len(o.Unknown); n > 0 {
		s += fmt.Sprintf(", %d did not run", n)
	}
	if len(o.Unknown) > 0 {
		s += fmt.Sprintf(", %d unknown", len(o.Unknown))
	}
	if len(o.Others) > 0 {
		s += fmt.Sprintf(", %d other tests that ran with them failed", len(o.Others))
	}
	if o.TimedOut {
		s += ", timed out"
	}
	return s
}

// Listed is the tests of one package, without running them.
type Listed struct {
	ImportPath string
	Tests      []string // the package's tests, in the order its runner lists them
}
