package node

import (
	"path"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// under reports a test (a canonical id) that the target t asks for: t
// itself, a test of its describe block, of its file or of its directory.
func under(t testrun.Target, id string) bool {
	if id == t.ID || strings.HasPrefix(id, t.ID+" > ") {
		return true
	}
	if t.IsPackage() {
		file, _, _ := strings.Cut(id, "::")
		if file == t.ImportPath {
			return true
		}
		if !isSourceExt(path.Ext(t.ImportPath)) {
			return t.ImportPath == "." || strings.HasPrefix(file, t.ImportPath+"/")
		}
	}
	return false
}

func hasTarget(targets []testrun.Target, id string) bool {
	for _, t := range targets {
		if under(t, id) {
			return true
		}
	}
	return false
}

// brokenFor reports a file that did not load and that holds t's tests.
func brokenFor(t testrun.Target, build []task.Failure) bool {
	for _, b := range build {
		if b.Package == t.ImportPath || (t.IsPackage() && under(t, b.Package+"::")) {
			return true
		}
	}
	return false
}

// finish adds up the runs into all (see Run): testrun.Tally, with the
// driver's rule of which ids a target holds.
func finish(all testrun.Outcome, targets []testrun.Target, runs []results, timedOut []bool, own bool) testrun.Outcome {
	rs := make([]testrun.Run, len(runs))
	for i, r := range runs {
		rs[i] = testrun.Run{Passed: r.passed, Skipped: r.skipped, Failed: r.failed, Build: r.build}
	}
	return testrun.Tally(all, targets, rs, timedOut, own, testrun.Scope{Under: under, BrokenFor: brokenFor})
}
