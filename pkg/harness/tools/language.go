package tools

import (
	"context"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is the repository's language driver as the tools use it
// (pkg/lang's Driver is one): its tests, its test names, the static checks
// an edit is held to, and its declarations.
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

// resolveTest is the canonical target of a test as named.
func (s *Session) resolveTest(id string) (testrun.Target, error) {
	if s.env.Lang != nil {
		return s.env.Lang.Resolve(s.ws.Dir, id)
	}
	return golang.Resolve(s.ws.Dir, id)
}

// buildIndex indexes the workspace's declarations.
func (s *Session) buildIndex() (*codeindex.Index, error) {
	if s.env.Lang != nil {
		return s.env.Lang.Index(s.ws.Dir)
	}
	return codeindex.Build(s.ws.Dir)
}

// isTestFile reports a file of tests (ranked after code in searches): a
// Go file by its name, as always; another by the driver.
func (s *Session) isTestFile(rel string) bool {
	if s.env.Lang != nil && !strings.HasSuffix(rel, ".go") {
		return s.env.Lang.IsTestFile(rel)
	}
	return strings.HasSuffix(rel, "_test.go")
}
