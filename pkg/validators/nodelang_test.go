package validators

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
)

// fileNodeLang names JavaScript's tests as the gates' rules need them
// named, and runs none.
type fileNodeLang struct{}

func nodeLang() Language { return fileNodeLang{} }

func (fileNodeLang) Name() string { return langNode }

func (fileNodeLang) Resolve(_, id string) (testrun.Target, error) {
	file, name, ok := strings.Cut(id, "::")
	if !ok {
		return testrun.Target{}, fmt.Errorf("%s: %w", id, testrun.ErrNotFound)
	}
	return testrun.Target{ID: id, ImportPath: file, Dir: file, Test: name}, nil
}

var errNoRun = errors.New("runs no tests")

func (fileNodeLang) Run(context.Context, string, []string, int) (testrun.Outcome, error) {
	return testrun.Outcome{}, errNoRun
}

func (fileNodeLang) RunPackages(context.Context, string, []string) (testrun.Outcome, error) {
	return testrun.Outcome{}, errNoRun
}

func (fileNodeLang) Check(context.Context, string, []string) ([]findings.Finding, error) {
	return nil, errNoRun
}

func (fileNodeLang) IsTestFile(rel string) bool {
	base := path.Base(rel)
	if !isJSSource(base) {
		return false
	}
	if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") {
		return true
	}
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if seg == "__tests__" || seg == "test" || seg == "tests" {
			return true
		}
	}
	return false
}

func (fileNodeLang) IsTestData(rel string) bool {
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if seg == "__fixtures__" || seg == "fixtures" || seg == "__snapshots__" {
			return true
		}
	}
	return false
}
