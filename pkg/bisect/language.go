package bisect

import (
	"context"
	"fmt"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is what bisection needs of a repository's language driver
// (lang.Driver satisfies it): the tests named canonically at a commit, and
// the checkout's dependencies set up before its tests run there. There is
// no default: a bisection without one is an error wrapping lang.ErrNoDriver.
type Language interface {
	// Setup makes the checkout's dependencies ready for its tests; its
	// error names the command that failed and its output.
	Setup(ctx context.Context, dir string) error
	// Resolve turns a test or a package as a report names it into its
	// canonical target; errors wrap testrun.ErrNotFound or
	// testrun.ErrAmbiguous.
	Resolve(dir, id string) (testrun.Target, error)
}

// TestDeclarer is a Language that tells, by reading a checkout and running
// nothing, whether it declares a test (by its canonical id): bisection asks
// it whether the tests were there at the blamed commit's parent when no run
// there could say (AddedTest). Without it a test is there when it resolves.
type TestDeclarer interface {
	DeclaresTest(dir, id string) bool
}

// noLanguage is the error of a search given no language driver.
func noLanguage(what string) error {
	return fmt.Errorf("%s: no language driver to name and run the tests: %w", what, lang.ErrNoDriver)
}

// declares reports whether the checkout at dir has the test id, as l
// tells.
func declares(l Language, dir, id string) bool {
	if d, ok := l.(TestDeclarer); ok {
		return d.DeclaresTest(dir, id)
	}
	_, err := l.Resolve(dir, id)
	return err == nil
}

// Canonical resolves tests (as reports or people name them) in the checkout
// at dir with the language l, dropping duplicates.
func Canonical(l Language, dir string, tests []string) ([]string, error) {
	if l == nil {
		return nil, noLanguage("name the tests")
	}
	return testrun.Canonical(l, dir, tests)
}
