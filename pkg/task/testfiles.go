package task

import (
	"sync"
	"sync/atomic"
)

// Which packages are files of tests is the language drivers' to say: a
// runner that names its tests by file ("tests/test_x.py::test_y") has its
// driver register a rule that knows its files, when the driver's package
// is loaded (pkg/lang/all loads every driver). A package no rule claims is
// an import path, as a Go package's is.
var testFileRules struct {
	mu    sync.Mutex // serializes registrations
	rules atomic.Pointer[[]func(pkg string) bool]
}

// RegisterTestFileRule adds a driver's rule for the packages that are
// files of tests (see Failure.ID). Drivers call it from their package's
// init; it is safe to call at any time, and a rule is never taken back.
func RegisterTestFileRule(isFile func(pkg string) bool) {
	testFileRules.mu.Lock()
	defer testFileRules.mu.Unlock()
	var rules []func(string) bool
	if old := testFileRules.rules.Load(); old != nil {
		rules = append(rules, *old...)
	}
	rules = append(rules, isFile)
	testFileRules.rules.Store(&rules)
}

// IsTestFilePath reports a package that is a file of tests (see ID): one
// that a registered driver's rule claims.
func IsTestFilePath(pkg string) bool {
	rules := testFileRules.rules.Load()
	if rules == nil {
		return false
	}
	for _, isFile := range *rules {
		if isFile(pkg) {
			return true
		}
	}
	return false
}
