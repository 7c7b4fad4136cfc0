package python

import (
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// results is what one invocation says, test by test, by node id.
type results struct {
	passed, skipped []string
	failed          []task.Failure // Package: the file; Test: the rest of the node id
	build           []task.Failure // Package: the file (or directory) that did not collect
}

func (rs results) empty() bool {
	return len(rs.passed)+len(rs.skipped)+len(rs.failed)+len(rs.build) == 0
}

// results maps a JUnit report's tests to node ids, and tells collection
// errors (a test case named after the module, with no classname) from
// tests' failures.
func (r *resolver) results(inv invocation) results {
	var rs results
	for _, id := range inv.rep.Passed {
		rs.passed = append(rs.passed, r.joined(id))
	}
	for _, id := range inv.rep.Skipped {
		rs.skipped = append(rs.skipped, r.joined(id))
	}
	aliases := aliasesOf(r.dir)
	for _, f := range inv.rep.Failures {
		if f.Kind == "error" && f.Message == "collection failure" && f.Package == suiteName {
			b := task.Failure{Package: r.collected(f.Test), Output: f.Output}
			describeBuild(&b, r.dir, aliases)
			rs.build = append(rs.build, b)
			continue
		}
		classname := f.Package
		if classname == suiteName {
			classname = f.Test
		}
		if file, test, ok := r.node(classname, f.Test); ok {
			f.Package, f.Test = file, test
		}
		describeFailure(&f, r.dir, aliases)
		rs.failed = append(rs.failed, f)
	}
	for _, f := range inv.rep.BuildErrors {
		describeBuild(&f, r.dir, aliases)
		rs.build = append(rs.build, f)
	}
	return rs
}

// joined is the node id of a passed or skipped test of a report, named by
// its classname and name joined with a dot (see suiteName).
func (r *resolver) joined(id string) string {
	if name, ok := strings.CutPrefix(id, suiteName+"."); ok {
		if file, test, ok := r.node(name, name); ok {
			return file + "::" + test
		}
	}
	return r.fromJoined(id)
}

// collected is the file or directory a collection error names by its
// dotted path ("tests.test_x", "tests.conftest", "tests").
func (r *resolver) collected(dotted string) string {
	if f := r.moduleFile(dotted); f != "" {
		return f
	}
	if d, ok := cleanRel(strings.ReplaceAll(dotted, ".", "/")); ok {
		if fi, err := untrusted.Lstat(r.dir, d); err == nil && fi.IsDir() {
			return d
		}
	}
	return dotted
}

func aliasesOf(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		return []string{real}
	}
	return nil
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

// pytestFailed says, for each target's file or directory, that pytest
// could not run its tests, with pytest's own words.
func pytestFailed(targets []testrun.Target, output, dir string) []task.Failure {
	var out []task.Failure
	seen := map[string]bool{}
	aliases := aliasesOf(dir)
	for _, t := range targets {
		if seen[t.ImportPath] {
			continue
		}
		seen[t.ImportPath] = true
		f := task.Failure{Package: t.ImportPath, Output: output}
		describeBuild(&f, dir, aliases)
		out = append(out, f)
	}
	return out
}
