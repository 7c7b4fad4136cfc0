package node

import (
	"path"
	"strings"

	"github.com/redfix/redfix/pkg/report"
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
	// failed (or, for a file or directory, did not load), else a pass
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
	asked := func(id string) bool { return !own || hasTarget(targets, id) }
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
