// Package lang is the seam between redfix and a repository's language:
// everything that depends on it goes through a Driver, chosen per
// repository (detected from its files, or named in the configuration).
// Triage, the agent's tools, the gates, mine and bench call a driver,
// never a toolchain directly.
//
// A driver sets up a checkout's dependencies (the one step that may reach
// a package registry), runs tests and reads their results, names tests
// (canonical ids: "import/path.TestX/sub" for Go, pytest's node ids
// "tests/test_x.py::TestC::test_y[p]" for Python, FILE::NAME for
// JavaScript and TypeScript: "src/price.test.ts::price > applies the
// discount"), lists them, measures
// per-test coverage, runs the static checks an edit is held to, tells test
// files and test data from code, and finds declarations.
//
// A language's rules for the gates, the judge's context, triage's
// fingerprints, mining past fixes and the offline policy's repair
// templates are capabilities a driver may implement, small interfaces
// their consumers declare (pkg/validators, pkg/judge, pkg/triage,
// pkg/bench, pkg/harness/offline) and ask for with a type assertion.
// The drivers are registered in one place, pkg/lang/all; every driver
// passes one conformance suite, pkg/lang/langtest.
package lang

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testenv"
	"github.com/redfix/redfix/pkg/testrun"
)

// Driver is one language's toolchain as redfix uses it on a checkout. Paths
// and patterns are relative to the checkout's root (slash-separated), and
// every command runs through pkg/sandbox, confined by the context.
type Driver interface {
	// Name names the driver ("go", "python"), as the configuration does.
	Name() string
	// Detect says how strongly the files at dir (a checkout's root) point
	// at the driver's language: 0 not at all; the highest wins.
	Detect(dir string) int

	// Setup makes the checkout's dependencies ready for its tests. It is
	// the only step that may reach a package registry; its error names
	// the command that failed and its output.
	Setup(ctx context.Context, dir string) error

	// Resolve turns a test as a report or a person names it (canonical,
	// or in the runner's own report dialect, or bare where unambiguous)
	// into its canonical target. Errors wrap testrun.ErrNotFound or
	// testrun.ErrAmbiguous.
	Resolve(dir, id string) (testrun.Target, error)
	// Run runs tests (ids, resolved first) count times each; the outcome
	// names tests by their canonical ids.
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	// RunPackages runs every test of the packages (a language's unit of
	// tests: a Go package, a Python test module or directory).
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	// Build checks that the packages and their tests build (compile, or
	// are collected) without running a test: failures are in Build.
	Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	// List lists the tests of packages without running them.
	List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error)
	// Localize ranks source lines by per-test coverage of the failing
	// tests and passing tests around them (spectrum-based localization).
	Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error)
	// PackageOf is the package (as Run and RunPackages take it) holding
	// the file at rel, ok false when the file belongs to none.
	PackageOf(dir, rel string) (pkg string, ok bool)

	// Check runs the static checks an edit is held to on the files (and
	// the packages that hold them): build or compile, lint, format. Only
	// findings a change brings count: callers compare with a base.
	Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error)

	// IsTestFile reports a file of tests (what the integrity gate guards);
	// IsTestData a file tests read or compare with (fixtures, golden
	// files, snapshots); IsSource a file of the language's code that the
	// agent's symbol tools index.
	IsTestFile(rel string) bool
	IsTestData(rel string) bool
	IsSource(rel string) bool
	// Index indexes the declarations of the checkout's source files with
	// a real parser.
	Index(dir string) (*codeindex.Index, error)
}

// ErrNoDriver is returned when no driver serves a repository: triage drops
// its reports with that reason, never retries them.
var ErrNoDriver = errors.New("no language driver knows how to run this repository's tests")

// Drivers chooses a repository's driver among those it holds: the one the
// configuration names for the repository, else the one whose Detect is
// strongest.
type Drivers struct {
	all []Driver
	// byRepo names drivers for repositories (path.Match patterns on the
	// repository as jobs name it), first match wins.
	byRepo []override
}

type override struct{ pattern, driver string }

// New holds drivers, in order of preference on a tie.
func New(drivers ...Driver) *Drivers { return &Drivers{all: drivers} }

// Override makes the repositories matching pattern use the named driver,
// whatever their files say. An unknown driver or a bad pattern is an error.
func (d *Drivers) Override(pattern, driver string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("language override %q: %w", pattern, err)
	}
	if d.named(driver) == nil {
		return fmt.Errorf("language override %q: no driver %q (known: %s)", pattern, driver, strings.Join(d.Names(), ", "))
	}
	d.byRepo = append(d.byRepo, override{pattern, driver})
	return nil
}

// All are the drivers, in order of preference on a tie.
func (d *Drivers) All() []Driver { return append([]Driver(nil), d.all...) }

// Names lists the drivers' names, sorted.
func (d *Drivers) Names() []string {
	var names []string
	for _, dr := range d.all {
		names = append(names, dr.Name())
	}
	sort.Strings(names)
	return names
}

func (d *Drivers) named(name string) Driver {
	for _, dr := range d.all {
		if dr.Name() == name {
			return dr
		}
	}
	return nil
}

// IsTestFile reports a file of tests to any of the drivers: where a
// repository's driver is not at hand (a bare mirror has no files to
// detect a language from), a test's file is one of these.
func (d *Drivers) IsTestFile(rel string) bool {
	for _, dr := range d.all {
		if dr.IsTestFile(rel) {
			return true
		}
	}
	return false
}

// Named is the driver called name ("go", "python", "node").
func (d *Drivers) Named(name string) (Driver, error) {
	if dr := d.named(name); dr != nil {
		return dr, nil
	}
	return nil, fmt.Errorf("no driver %q (known: %s): %w", name, strings.Join(d.Names(), ", "), ErrNoDriver)
}

// For is the driver of repo (as jobs name it), checked out at dir.
func (d *Drivers) For(repo, dir string) (Driver, error) {
	for _, o := range d.byRepo {
		if ok, _ := path.Match(o.pattern, repo); ok {
			return d.named(o.driver), nil
		}
	}
	var best Driver
	score := 0
	for _, dr := range d.all {
		if s := dr.Detect(dir); s > score {
			best, score = dr, s
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s: %w (known: %s)", repo, ErrNoDriver, strings.Join(d.Names(), ", "))
	}
	return best, nil
}

// Configurable is a driver that runs a repository's tests with what they
// need (its .redfix.yaml's tests: section, or the central configuration's):
// every test command it runs (Run, RunPackages, Build, List, Localize)
// sees the variables and takes the arguments, and its setup installs the
// dependency groups. WithTests refuses an argument that would change what
// redfix reads back or which tests run, naming it and why.
type Configurable interface {
	WithTests(s testenv.Settings) (Driver, error)
}

// Configure is d running a repository's tests with s: d itself when s
// changes nothing, an error when d cannot take settings or refuses them.
// It is the one way settings reach a driver: triage's reruns and
// bisection, the agent's run_tests and the gates all run through the
// driver it returns.
func Configure(d Driver, s testenv.Settings) (Driver, error) {
	if s.IsZero() {
		return d, nil
	}
	c, ok := d.(Configurable)
	if !ok {
		return nil, fmt.Errorf("the %s driver takes no test settings (%s)", d.Name(), s)
	}
	cd, err := c.WithTests(s)
	if err != nil {
		return nil, fmt.Errorf("the %s driver refuses the test settings: %w", d.Name(), err)
	}
	return cd, nil
}
