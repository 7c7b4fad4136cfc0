package triage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Flakiness verdicts.
const (
	VerdictReliable = "reliable" // every run failed
	VerdictFlaky    = "flaky"    // some runs failed, some passed
	VerdictPassing  = "passing"  // no run failed
	// VerdictAddedFailing is reliable, and the culprit is the commit that
	// added the test: it has been failing since it was added.
	VerdictAddedFailing = "added-failing"
)

// TestEvidence is what the reruns of one test did.
type TestEvidence struct {
	Test     string `json:"test"` // canonical ID
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Failure is the first failure seen, when there was one.
	Failure *task.Failure `json:"failure,omitempty"`
}

// Verdict is the evidence's verdict.
func (e TestEvidence) Verdict() string { return verdict(e.Runs, e.Failures) }

func verdict(runs, failures int) string {
	switch {
	case failures == 0:
		return VerdictPassing
	case failures == runs:
		return VerdictReliable
	}
	return VerdictFlaky
}

// Reproduction is the evidence from re-running failing tests at one commit.
type Reproduction struct {
	// Flakiness sums the tests' runs and failures. Its verdict is reliable
	// when every test failed every run, passing when none failed at all,
	// and flaky otherwise.
	Flakiness task.Flakiness `json:"flakiness"`
	Tests     []TestEvidence `json:"tests"`
	// Invocations counts the runner's processes started.
	Invocations int `json:"invocations"`
}

// NotRunError says that a test did not run at all: its package did not
// build, or the test does not exist there.
type NotRunError struct {
	Test   string
	Reason string
}

func (e *NotRunError) Error() string { return fmt.Sprintf("%s did not run: %s", e.Test, e.Reason) }

// Reproduce runs each test n times at the checkout in dir and classifies
// each one. Tests are canonical IDs (see Canonical). They run together, n
// times each (a driver runs a package's tests in one process where its
// runner can, a subtest inside its parent, as CI runs it); a panic ends a
// test binary, so the runs it cut short are started again until n have
// completed, and a test that a panic keeps from starting is then run on its
// own. A run that times out counts
// as one failed run and ends that test's reruns: a hang is a failure, and
// waiting for it n times costs too much.
func Reproduce(ctx context.Context, r Runner, dir string, tests []string, n int) (Reproduction, error) {
	if n < 1 {
		n = 1
	}
	var rep Reproduction
	evs := make([]TestEvidence, len(tests))
	for i, id := range tests {
		evs[i] = TestEvidence{Test: id}
	}
	pending := func(i int) bool { return evs[i].Runs < n && !evs[i].TimedOut }
	// groups are the tests run together; a test that made no progress in
	// its group is run alone next.
	groups := [][]int{make([]int, len(tests))}
	for i := range tests {
		groups[0][i] = i
	}
	for len(groups) > 0 {
		g := groups[0]
		groups = groups[1:]
		var ids []int
		for _, i := range g {
			if pending(i) {
				ids = append(ids, i)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		want := n
		names := make([]string, len(ids))
		for k, i := range ids {
			names[k] = tests[i]
			want = min(want, n-evs[i].Runs)
		}
		o, err := r.Run(ctx, dir, names, want)
		rep.Invocations++
		if err != nil {
			if notRunnable(err) {
				return rep, &NotRunError{Test: names[0], Reason: err.Error()}
			}
			return rep, fmt.Errorf("rerun %s: %w", strings.Join(names, " "), err)
		}
		var progressed, stuck []int
		for _, i := range ids {
			c := count(o, tests[i])
			if c.runs == 0 {
				stuck = append(stuck, i)
				continue
			}
			ev := &evs[i]
			ev.Runs += c.runs
			ev.Failures += c.failures
			ev.TimedOut = c.timedOut
			if ev.Failure == nil && c.failure != nil {
				ev.Failure = c.failure
			}
			progressed = append(progressed, i)
		}
		for _, i := range stuck {
			if len(ids) == 1 {
				return rep, &NotRunError{Test: tests[i], Reason: notRunReason(o, tests[i])}
			}
			groups = append(groups, []int{i})
		}
		if len(progressed) > 0 {
			groups = append([][]int{progressed}, groups...)
		}
	}
	for _, ev := range evs {
		rep.Tests = append(rep.Tests, ev)
		rep.Flakiness.Runs += ev.Runs
		rep.Flakiness.Failures += ev.Failures
	}
	rep.Flakiness.Verdict = aggregate(rep.Tests)
	return rep, nil
}

// upFrontReruns is how many of a failure's re-runs at its commit triage
// makes before the bisection, when the tests' history does not show them
// flaky. The rest are made only when the bisection names no culprit: a
// culprit is named only with the evidence they would have given (see
// rerunPlan).
const upFrontReruns = 2

// RerunPlan splits reruns, the re-runs at a failure's commit that call it
// reliable when every one fails, around the bisection: first are made
// before it; the bisection's culprit needs evidence
// (bisect.NoisySearch.Evidence) of 2^reruns against a test that fails half
// of its runs at every commit, as many times likelier as reruns failures in
// a row would make it; when it names no culprit, topUp more are made, and a
// pass among any of them makes the failure flaky. So a failure flaky
// everywhere at one run in two is blamed on a commit at most once in
// 2^reruns, as when every re-run came first, and is sent on without a
// culprit at most once in 2^(first+topUp) more; a reliable one is bisected
// at once, the re-runs at bad and the runs that confirm the culprit
// serving both questions. With a flaky history, or reruns no more than
// upFrontReruns, every re-run comes first and nothing else is asked.
func RerunPlan(reruns int, flakyHistory bool) (first int, evidence float64, topUp int) {
	if flakyHistory || reruns <= upFrontReruns {
		return reruns, 0, 0
	}
	return upFrontReruns, math.Pow(2, float64(reruns)), reruns
}

// Add is rep with more's runs of the same tests added: runs and failures
// summed by test, the first failure kept, the verdict made again.
func (rep Reproduction) Add(more Reproduction) Reproduction {
	out := Reproduction{Invocations: rep.Invocations + more.Invocations}
	byTest := map[string]int{}
	for _, e := range append(slices.Clone(rep.Tests), more.Tests...) {
		k, ok := byTest[e.Test]
		if !ok {
			byTest[e.Test] = len(out.Tests)
			out.Tests = append(out.Tests, e)
			continue
		}
		t := &out.Tests[k]
		t.Runs += e.Runs
		t.Failures += e.Failures
		t.TimedOut = t.TimedOut || e.TimedOut
		if t.Failure == nil {
			t.Failure = e.Failure
		}
	}
	for _, e := range out.Tests {
		out.Flakiness.Runs += e.Runs
		out.Flakiness.Failures += e.Failures
	}
	out.Flakiness.Verdict = aggregate(out.Tests)
	return out
}

// ByTest is the evidence as the task carries it.
func ByTest(evs []TestEvidence) []task.TestFlakiness {
	out := make([]task.TestFlakiness, len(evs))
	for i, e := range evs {
		out[i] = task.TestFlakiness{Test: e.Test, Runs: e.Runs, Failures: e.Failures, Verdict: e.Verdict()}
	}
	return out
}

func aggregate(evs []TestEvidence) string {
	all := func(v string) bool {
		for _, e := range evs {
			if e.Verdict() != v {
				return false
			}
		}
		return true
	}
	switch {
	case all(VerdictReliable):
		return VerdictReliable
	case all(VerdictPassing):
		return VerdictPassing
	}
	return VerdictFlaky
}

type counted struct {
	runs, failures int
	timedOut       bool
	failure        *task.Failure
}

// count says how many runs of the test id one outcome holds, and how many
// failed, from the test's own outcome in each run.
func count(o testrun.Outcome, id string) counted {
	var c counted
	runs := o.Runs[id]
	c.runs = runs.Pass + runs.Fail
	c.failures = runs.Fail
	if runs.Fail > 0 {
		for i, f := range o.Failed {
			if fid := f.ID(); fid == id || strings.HasPrefix(fid, id+"/") {
				c.failure = &o.Failed[i]
				break
			}
		}
		if c.failure == nil {
			c.failure = &task.Failure{Test: id, Message: "failed (its subtests did not report)"}
		}
	}
	if o.TimedOut {
		c.timedOut = true
		c.runs++
		c.failures++
		if c.failure == nil {
			c.failure = &task.Failure{Test: id, Message: "test timed out", Output: o.Output}
		}
	}
	return c
}

func notRunReason(o testrun.Outcome, id string) string {
	if len(o.Build) > 0 {
		b := o.Build[0]
		msg := b.Message
		if msg == "" {
			msg = "build failed"
		}
		if b.Package != "" {
			return fmt.Sprintf("package %s does not build: %s", b.Package, msg)
		}
		return "does not build: " + msg
	}
	if len(o.Unknown) > 0 {
		return strings.Join(o.Unknown, "; ")
	}
	if slices.Contains(o.NotRun, id) {
		return "it started but never ended: " + o.Summary()
	}
	if len(o.Missing) > 0 {
		return "no such test here"
	}
	return o.Summary()
}

// notRunnable reports an error of the runner that means the test cannot run
// at this commit (no go.mod, a package outside the module), not that the
// runner is broken.
func notRunnable(err error) bool {
	return errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) || errors.Is(err, fs.ErrNotExist)
}
