package testrun

import (
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// Run is what one run of a runner that names tests by file reported: the
// ids of the tests that passed and were skipped, the tests that failed,
// and the files (or directories) whose tests did not load.
type Run struct {
	Passed, Skipped []string
	Failed          []task.Failure // Package: the file; Test: the rest of the id
	Build           []task.Failure // Package: the file or directory that did not load
}

// Scope is a driver's rule of which ids a target holds (Under: the test
// itself, its subtests or parameters, the tests of a file or directory
// target) and which build failures break it (BrokenFor).
type Scope struct {
	Under     func(t Target, id string) bool
	BrokenFor func(t Target, build []task.Failure) bool
}

// covers reports whether any target holds id.
func (s Scope) covers(targets []Target, id string) bool {
	for _, t := range targets {
		if s.Under(t, id) {
			return true
		}
	}
	return false
}

// Tally adds up runs of targets into all: each test's runs by outcome
// (its first failure kept), the build failures not yet in all, and each
// target's own runs (failed when a test under it failed or, for a file or
// directory, did not load or timed out; else passed when one passed, else
// skipped). own: the runs were of the targets alone, so a test outside
// them that failed is one of all.Others and a target that did not run is
// Missing (Incomplete too when a run timed out); otherwise every test is
// reported as asked.
func Tally(all Outcome, targets []Target, runs []Run, timedOut []bool, own bool, scope Scope) Outcome {
	t := tally{leaves: map[string]*report.Runs{}, first: map[string]task.Failure{}, builds: map[string]bool{},
		targets: map[string]*report.Runs{}, ran: map[string]bool{}}
	for _, b := range all.Build {
		t.builds[b.Package] = true
	}
	for i, rs := range runs {
		t.addLeaves(rs, &all)
		for _, tg := range targets {
			t.addTarget(tg, rs, timedOut[i], scope)
		}
	}
	passed := map[string]bool{}
	for _, id := range t.order {
		c := t.leaves[id]
		if own && !scope.covers(targets, id) {
			if c.Fail > 0 {
				all.Others = append(all.Others, t.first[id])
			}
			continue
		}
		all.Runs[id] = *c
		switch {
		case c.Fail > 0:
			all.Failed = append(all.Failed, t.first[id])
		case c.Pass > 0:
			all.Passed = append(all.Passed, id)
			passed[id] = true
		}
	}
	for _, tg := range targets {
		t.settleTarget(tg, &all, passed, timedOut, own, scope)
	}
	return all
}

// tally is Tally's counts: each test's runs (leaves, in the order first
// seen) and first failure, the build failures' packages, each target's
// runs and whether it ran at all.
type tally struct {
	leaves  map[string]*report.Runs
	order   []string
	first   map[string]task.Failure
	builds  map[string]bool
	targets map[string]*report.Runs
	ran     map[string]bool
}

func (t *tally) count(id string) *report.Runs {
	c := t.leaves[id]
	if c == nil {
		c = &report.Runs{}
		t.leaves[id] = c
		t.order = append(t.order, id)
	}
	return c
}

// addLeaves counts the tests of one run, and takes its new build failures
// into all.
func (t *tally) addLeaves(rs Run, all *Outcome) {
	for _, id := range rs.Passed {
		t.count(id).Pass++
	}
	for _, id := range rs.Skipped {
		t.count(id).Skip++
	}
	for _, f := range rs.Failed {
		id := f.ID()
		t.count(id).Fail++
		if _, ok := t.first[id]; !ok {
			t.first[id] = f
		}
	}
	for _, b := range rs.Build {
		if !t.builds[b.Package] {
			t.builds[b.Package] = true
			all.Build = append(all.Build, b)
		}
	}
}

// addTarget counts what the target tg did in one run.
func (t *tally) addTarget(tg Target, rs Run, timedOut bool, scope Scope) {
	var fail, pass, skip bool
	for _, f := range rs.Failed {
		fail = fail || scope.Under(tg, f.ID())
	}
	for _, id := range rs.Passed {
		pass = pass || scope.Under(tg, id)
	}
	for _, id := range rs.Skipped {
		skip = skip || scope.Under(tg, id)
	}
	if tg.IsPackage() && (scope.BrokenFor(tg, rs.Build) || timedOut) {
		fail = true
	}
	c := t.targets[tg.ID]
	if c == nil {
		c = &report.Runs{}
		t.targets[tg.ID] = c
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
		t.ran[tg.ID] = true
	}
}

// settleTarget records the target tg's own runs when the runs were its
// own, and says it is missing when it did not run and nothing broke it.
func (t *tally) settleTarget(tg Target, all *Outcome, passed map[string]bool, timedOut []bool, own bool, scope Scope) {
	c := t.targets[tg.ID]
	if own && c != nil && t.ran[tg.ID] {
		all.Runs[tg.ID] = *c
		if c.Fail == 0 && c.Pass > 0 && !passed[tg.ID] {
			all.Passed = append(all.Passed, tg.ID)
		}
	}
	if t.ran[tg.ID] || scope.BrokenFor(tg, all.Build) || !own {
		return
	}
	all.Missing = append(all.Missing, tg.ID)
	for _, to := range timedOut {
		if to {
			all.Incomplete = append(all.Incomplete, tg.ImportPath)
			return
		}
	}
}
