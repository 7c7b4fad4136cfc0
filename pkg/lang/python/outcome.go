package python

import (
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/report"
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

// finish adds up the runs into all (see Run).
func finish(all testrun.Outcome, targets []testrun.Target, runs []results, timedOut []bool, own bool) testrun.Outcome {
	leaves := map[string]*report.Runs{}
	var order []string
	firstFailure := map[string]task.Failure{}
	builds := map[string]bool{}
	for _, b := range all.Build {
		builds[b.Package] = true
	}
	count := func(id string) *report.Runs {
		c := leaves[id]
		if c == nil {
			c = &report.Runs{}
			leaves[id] = c
			order = append(order, id)
		}
		return c
	}
	// What each target did in each run: a failure when a test under it
	// failed (or, for a file or directory, did not collect), else a pass
	// when one passed, else a skip when one was skipped.
	targetRuns := map[string]*report.Runs{}
	ran := map[string]bool{}
	for i, rs := range runs {
		for _, id := range rs.passed {
			count(id).Pass++
		}
		for _, id := range rs.skipped {
			count(id).Skip++
		}
		for _, f := range rs.failed {
			id := f.ID()
			count(id).Fail++
			if _, ok := firstFailure[id]; !ok {
				firstFailure[id] = f
			}
		}
		for _, b := range rs.build {
			if !builds[b.Package] {
				builds[b.Package] = true
				all.Build = append(all.Build, b)
			}
		}
		for _, t := range targets {
			var fail, pass, skip bool
			for _, f := range rs.failed {
				fail = fail || under(t, f.ID())
			}
			for _, id := range rs.passed {
				pass = pass || under(t, id)
			}
			for _, id := range rs.skipped {
				skip = skip || under(t, id)
			}
			if t.IsPackage() && (brokenFor(t, rs.build) || timedOut[i]) {
				fail = true
			}
			c := targetRuns[t.ID]
			if c == nil {
				c = &report.Runs{}
				targetRuns[t.ID] = c
			}
			switch {
			case fail:
				c.Fail++
			case pass:
				c.Pass++
			case skip:
				c.Skip++
			}
			if fail || pass || skip {
				ran[t.ID] = true
			}
		}
	}
	asked := func(id string) bool {
		if !own {
			return true
		}
		for _, t := range targets {
			if under(t, id) {
				return true
			}
		}
		return false
	}
	passed := map[string]bool{}
	for _, id := range order {
		c := leaves[id]
		if !asked(id) {
			if c.Fail > 0 {
				all.Others = append(all.Others, firstFailure[id])
			}
			continue
		}
		all.Runs[id] = *c
		switch {
		case c.Fail > 0:
			all.Failed = append(all.Failed, firstFailure[id])
		case c.Pass > 0:
			all.Passed = append(all.Passed, id)
			passed[id] = true
		}
	}
	for _, t := range targets {
		c := targetRuns[t.ID]
		if own && c != nil && ran[t.ID] {
			all.Runs[t.ID] = *c
			if c.Fail == 0 && c.Pass > 0 && !passed[t.ID] {
				all.Passed = append(all.Passed, t.ID)
			}
		}
		if ran[t.ID] || brokenFor(t, all.Build) || !own {
			continue
		}
		all.Missing = append(all.Missing, t.ID)
		for _, to := range timedOut {
			if to {
				all.Incomplete = append(all.Incomplete, t.ImportPath)
				break
			}
		}
	}
	return all
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
