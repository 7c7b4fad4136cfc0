package triage

import (
	"context"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/task"
)

// The reproduction is sequential (bisect/reliable.go says why): a failing
// test is run bisect.FirstRuns times at bad before the search; a verdict
// other than reliable is then completed to the reruns asked for, as
// before (the flake history counts those runs). A reliable one goes to the
// search, whose failed runs at or after its culprit count as reruns; the
// runs still missing are made at bad after it, one at a time, and the
// first that passes makes the failure flaky. A failure is called reliable
// when as many runs of the broken code as reruns asked for failed and
// none at bad passed: a test failing one run in two everywhere is called
// reliable about as often as with reruns fixed runs (`bot bench-bisect`
// measures it).

// reproduceFirst runs the reproduction's first runs, and the rest of the
// reruns when they do not say reliable.
func reproduceFirst(ctx context.Context, r Runner, dir string, tests []string, reruns int) (Reproduction, error) {
	first := min(reruns, bisect.FirstRuns)
	rep, err := Reproduce(ctx, r, dir, tests, first)
	if err != nil || rep.Flakiness.Verdict == VerdictReliable || first >= reruns {
		return rep, err
	}
	more, err := Reproduce(ctx, r, dir, tests, reruns-first)
	return rep.add(more), err
}

// confirmReliable makes the runs at bad that a reliable verdict still needs
// once the bisection named bis.Blame, one at a time, until one passes; it
// returns the reproduction with them added.
func confirmReliable(ctx context.Context, r Runner, dir string, tests []string, reruns int, bis task.Bisection, rep Reproduction) (Reproduction, error) {
	if bis.Blame == "" {
		return rep, nil
	}
	for range bisect.MoreRuns(reruns, bis.BrokenFailures) {
		more, err := Reproduce(ctx, r, dir, tests, 1)
		rep = rep.add(more)
		if err != nil || rep.Flakiness.Verdict != VerdictReliable {
			return rep, err
		}
	}
	return rep, nil
}

// add is the reproduction with more's runs of the same tests added.
func (rep Reproduction) add(more Reproduction) Reproduction {
	out := Reproduction{Invocations: rep.Invocations + more.Invocations}
	for i, e := range rep.Tests {
		if i < len(more.Tests) && more.Tests[i].Test == e.Test {
			m := more.Tests[i]
			e.Runs += m.Runs
			e.Failures += m.Failures
			e.TimedOut = e.TimedOut || m.TimedOut
			if e.Failure == nil {
				e.Failure = m.Failure
			}
		}
		out.Tests = append(out.Tests, e)
		out.Flakiness.Runs += e.Runs
		out.Flakiness.Failures += e.Failures
	}
	if len(out.Tests) == 0 {
		return more
	}
	out.Flakiness.Verdict = aggregate(out.Tests)
	return out
}
