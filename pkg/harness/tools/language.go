package tools

import (
	"context"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is the repository's language driver as the tools use it
// (pkg/lang's Driver is one): its tests, its test names, the static checks
// an edit is held to, and its declarations. Every session has one: there
// is no default language.
type Language interface {
	TestRunner
	// Resolve turns a test as named into its canonical target.
	Resolve(dir, id string) (testrun.Target, error)
	// Check runs the static checks on files; the tools compare with the
	// task's commit and show only the findings an edit brought.
	Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error)
	// IsSource reports a file of the language's code, IsTestFile a file
	// of tests.
	IsSource(rel string) bool
	IsTestFile(rel string) bool
	// Index indexes the checkout's declarations.
	Index(dir string) (*codeindex.Index, error)
}

// The tools' optional capabilities of a language driver, asked for with a
// type assertion (Worded, for the descriptions, is in words.go).
type (
	// PackagePatterns is a driver whose packages are also named by
	// patterns that resolve to no one package ("./...", "./cmd/x"):
	// run_tests runs all their tests.
	PackagePatterns interface {
		IsPackagePattern(arg string) bool
	}
	// ChecksNamer names the static checks an edit of the driver's files
	// is held to ("gofmt, go build, go vet").
	ChecksNamer interface {
		ChecksName() string
	}
)

// resolveTest is the canonical target of a test as named.
func (s *Session) resolveTest(id string) (testrun.Target, error) {
	return s.env.Lang.Resolve(s.ws.Dir, id)
}

// buildIndex indexes the workspace's declarations.
func (s *Session) buildIndex() (*codeindex.Index, error) {
	return s.env.Lang.Index(s.ws.Dir)
}

// isTestFile reports a file of tests (ranked after code in searches), as
// the driver tells.
func (s *Session) isTestFile(rel string) bool {
	return s.env.Lang.IsTestFile(rel)
}
