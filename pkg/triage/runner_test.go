package triage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// scriptedRunner answers each run with the next outcome.
type scriptedRunner struct {
	outs []testrun.Outcome
	errs []error
	n    int
}

func (s *scriptedRunner) Run(context.Context, string, []string, int) (testrun.Outcome, error) {
	i := s.n
	s.n++
	return s.outs[i], s.errs[i]
}

// ReportRuns passes every run through unchanged and reports each as it
// ends: the tests, the count and what became of them.
func TestReportRunsReportsEachRun(t *testing.T) {
	t.Parallel()
	next := &scriptedRunner{
		outs: []testrun.Outcome{
			{Failed: []task.Failure{{Test: "TestAdd"}}},
			{Passed: []string{"a", "b", "c", "d"}},
			{},
		},
		errs: []error{nil, nil, errors.New("go: not found")},
	}
	var lines []string
	r := ReportRuns(next, func(stage, detail string) { lines = append(lines, stage+": "+detail) })
	out, err := r.Run(context.Background(), "/ws", []string{"example.com/calc.TestAdd"}, 5)
	if err != nil || len(out.Failed) != 1 {
		t.Fatalf("first run: %+v, %v; want the runner's outcome unchanged", out, err)
	}
	if _, err := r.Run(context.Background(), "/ws", []string{"a", "b", "c", "d"}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), "/ws", []string{"x"}, 1); err == nil || err.Error() != "go: not found" {
		t.Fatalf("third run: %v, want the runner's error unchanged", err)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one a run: %q", len(lines), lines)
	}
	for i, want := range []string{
		"test run: example.com/calc.TestAdd ×5: 0 passed, 1 failed, 0 did not build, 0 did not run",
		"test run: a b c and 1 more ×1: 4 passed, 0 failed",
		"test run: x ×1: go: not found",
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want it to start %q", i, lines[i], want)
		}
	}
	if _, ok := r.(bisect.Builder); !ok {
		t.Error("the reporting runner hides the builds: triage would not report them")
	}
}
