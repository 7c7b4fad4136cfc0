package bisect

import (
	"context"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is what bisection needs of a repository's language driver
// (lang.Driver satisfies it): the tests named canonically at a commit, and
// the checkout's dependencies set up before its tests run there. A nil
// Language is Go's: golang.Resolve, and nothing to set up.
type Language interface {
	// Setup makes the checkout's dependencies ready for its tests; its
	// error names the command that failed and its output.
	Setup(ctx context.Context, dir string) error
	// Resolve turns a test or a package as a report names it into its
	// canonical target; errors wrap testrun.ErrNotFound or
	// testrun.ErrAmbiguous.
	Resolve(dir, id string) (testrun.Target, error)
}

// goLanguage is the Language of Go repositories, the default.
type goLanguage struct{}

func (goLanguage) Setup(context.Context, string) error { return nil }

func (goLanguage) Resolve(dir, id string) (testrun.Target, error) { return golang.Resolve(dir, id) }

// isGo reports Go's language: nil, or a driver named "go".
func isGo(l Language) bool {
	if l == nil {
		return true
	}
	n, ok := l.(interface{ Name() string })
	return ok && n.Name() == "go"
}

// languageOr is l, or Go's when l is nil.
func languageOr(l Language) Language {
	if l == nil {
		return goLanguage{}
	}
	return l
}

// Canonical resolves tests (as reports or people name them) in the checkout
// at dir with the language l (Go's when nil), dropping duplicates.
func Canonical(l Language, dir string, tests []string) ([]string, error) {
	return testrun.Canonical(languageOr(l), dir, tests)
}
