package gaterules

import (
	"fmt"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// TestFiles is where the regression gate starts in a language whose
// packages of tests are files (Python's, JavaScript's): the failing tests'
// files and the test files the patch leaves changed (isTestModule, still
// in the checkout at dir); and the code files the patch changes (isCode),
// whose importers are the dependents.
func TestFiles(dir string, patch []unidiff.File, failing []string, resolve func(dir, id string) (testrun.Target, error), isCode, isTestModule func(string) bool) (first map[string]bool, changed []string) {
	first = map[string]bool{}
	for _, id := range failing {
		if t, err := resolve(dir, id); err == nil {
			first[t.ImportPath] = true
		}
	}
	for _, f := range patch {
		for _, p := range f.Paths() {
			if !isCode(p) {
				continue
			}
			changed = append(changed, p)
			if isTestModule(p) && p == f.NewPath {
				if fi, err := untrusted.Lstat(dir, p); err == nil && fi.Mode().IsRegular() {
					first[p] = true
				}
			}
		}
	}
	return first, changed
}

// FileScope is the regression scope (a driver's RegressionScope) of a
// language whose packages of tests are files: TestFiles first; then, when
// dependents is true and the patch changes code, the test files that
// importers (the test files importing the changed files, nearest first,
// skip left out) finds.
func FileScope(dir string, patch []unidiff.File, failing []string, resolve func(dir, id string) (testrun.Target, error), isCode, isTestModule func(string) bool, dependents bool, importers func(changed []string, skip map[string]bool) ([]Dependent, error)) ([]string, []string, error) {
	first, changed := TestFiles(dir, patch, failing, resolve, isCode, isTestModule)
	if len(changed) == 0 || !dependents {
		return SortedKeys(first), nil, nil
	}
	deps, err := importers(changed, first)
	if err != nil {
		return SortedKeys(first), nil, fmt.Errorf("importers of the changed modules: %w", err)
	}
	return SortedKeys(first), Dirs(deps), nil
}
