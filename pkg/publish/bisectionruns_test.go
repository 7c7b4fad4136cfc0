package publish

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// The body says what a bisection's evidence rests on: the test runs it made
// and the runs it reused from earlier searches, never "0 commits tested"
// beside an evidence that cached runs gave; and its headline counts every
// failing test of the task, those merged into it from groups with the
// same culprit included.
func TestBodySaysWhatTheBisectionRanAndCountsEveryFailure(t *testing.T) {
	tk := sampleTask()
	tk.Failures = []task.Failure{
		{Package: "example.com/calc", Test: "TestParse"},
		{Package: "example.com/calc", Test: "TestFormat"},
		{Package: "example.com/calc", Test: "TestRound"},
	}
	for _, c := range []struct {
		steps, cached int
		want          string
	}{
		{0, 12, "(no new test run: 12 runs reused from earlier searches)"},
		{3, 9, "(3 test runs, and 9 runs reused from earlier searches)"},
		{1, 0, "(1 test run)"},
	} {
		tk.Bisection.Steps, tk.Bisection.CachedRuns, tk.Bisection.Evidence = c.steps, c.cached, 291
		body := Body(PullRequest{Task: tk, Patch: "--- a/x.go\n+++ b/x.go\n"})
		if !strings.Contains(body, c.want) || strings.Contains(body, "0 commits") || strings.Contains(body, "commits tested") {
			t.Errorf("steps %d, cached %d: the bisection reads %q, want %q", c.steps, c.cached, between(body, "Found by", "\n"), c.want)
		}
		if !strings.Contains(body, "291 times likelier") {
			t.Errorf("the evidence is not said: %q", between(body, "Against chance", "\n"))
		}
		// No judge ran: the notice, then the headline.
		head := strings.TrimPrefix(body, UnreviewedNotice+"\n\n")
		if !strings.HasPrefix(head, "redfix found 3 tests failing") {
			t.Errorf("headline %q, want the 3 failing tests", strings.SplitN(head, "\n", 2)[0])
		}
	}
}

// between is s from the first from to the next to after it.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}
