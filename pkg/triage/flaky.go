package triage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Runner runs tests in a checkout; testrun.Runner satisfies it.
type Runner interface {
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
}

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
	// Invocations counts the go test processes started.
	Invocations int `json:"invocations"`
}

// NotRunError says that a test did not run at all: its package did not
// build, or the test does not exist there.
type NotRunError struct {
	Test   string
	Reason string
}

func (e *NotRunError) Error() string { return fmt.Sprintf("%s did not run: %s", e.Test, e.Reason) }

// Reproduce runs each test n times at the checkout in dir and classifies it.
// Tests are canonical IDs (see Canonical). The n runs go to one `go test
// -count n` where they can; a panic ends a test binary, so the runs it cut
// short are started again until n have completed. A run that times out
// counts as one failed run and ends that test's reruns: a hang is a failure,
// and waiting for it n times costs too much.
func Reproduce(ctx context.Context, r Runner, dir string, tests []string, n int) (Reproduction, error) {
	if n < 1 {
		n = 1
	}
	var rep Reproduction
	for _, id := range tests {
		ev := TestEvidence{Test: id}
		for ev.Runs < n && !ev.TimedOut {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			o, err := r.Run(ctx, dir, []string{id}, n-ev.Runs)
			rep.Invocations++
			if err != nil {
				if notRunnable(err) {
					return rep, &NotRunError{Test: id, Reason: err.Error()}
				}
				return rep, fmt.Errorf("rerun %s: %w", id, err)
			}
			c := count(o, id)
			if c.runs == 0 {
				return rep, &NotRunError{Test: id, Reason: notRunReason(o)}
			}
			ev.Runs += c.runs
			ev.Failures += c.failures
			ev.TimedOut = c.timedOut
			if ev.Failure == nil && c.failure != nil {
				ev.Failure = c.failure
			}
		}
		rep.Tests = append(rep.Tests, ev)
		rep.Flakiness.Runs += ev.Runs
		rep.Flakiness.Failures += ev.Failures
	}
	rep.Flakiness.Verdict = aggregate(rep.Tests)
	return rep, nil
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

// Canonical resolves test names ("TestParse/sub", or full IDs) to canonical
// IDs in the module at dir.
func Canonical(dir string, tests []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, t := range tests {
		target, err := testrun.Resolve(dir, t)
		if err != nil {
			return nil, err
		}
		if !seen[target.ID] {
			seen[target.ID] = true
			ids = append(ids, target.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("no test named")
	}
	return ids, nil
}

type counted struct {
	runs, failures int
	timedOut       bool
	failure        *task.Failure
}

// count says how many runs of the test id one outcome holds, and how many
// failed. A failing run of a test with subtests reports each failing
// subtest: the runs that failed are those of the subtest that failed most.
func count(o testrun.Outcome, id string) counted {
	var c counted
	for _, p := range o.Passed {
		if p == id {
			c.runs++
		}
	}
	fails := map[string]int{}
	for i, f := range o.Failed {
		fid := f.ID()
		if fid == id || strings.HasPrefix(fid, id+"/") || strings.HasPrefix(id, fid+"/") {
			fails[fid]++
			if c.failure == nil {
				c.failure = &o.Failed[i]
			}
		}
	}
	for _, n := range fails {
		c.failures = max(c.failures, n)
	}
	c.runs += c.failures
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

func notRunReason(o testrun.Outcome) string {
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
