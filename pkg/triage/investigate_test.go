package triage

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/task"
)

func TestInvestigateReliableFailure(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	v, err := Investigate(ctx, goOnly, bisect.Bisector{}, f.Dir, "", "HEAD", []string{"TestAdd"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Flakiness != (task.Flakiness{Runs: 2, Failures: 2, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", v.Flakiness)
	}
	if v.Bisection == nil || v.Bisection.Blame != shas[6] || v.BisectError != "" {
		t.Fatalf("bisection = %+v, error %q", v.Bisection, v.BisectError)
	}
	if v.Failure == nil || v.Failure.Message != "Add(1, 2) = -1, want 3" || v.Fingerprint != Fingerprint(f.Dir, *v.Failure) {
		t.Errorf("failure %+v fingerprint %q", v.Failure, v.Fingerprint)
	}
	if len(v.Tests) != 1 || v.Tests[0] != bisecttest.AddTestID || v.Commit != shas[10] {
		t.Errorf("tests %q commit %s", v.Tests, v.Commit)
	}
	if v.TestRuns != 2+v.Bisection.Steps {
		t.Errorf("TestRuns = %d", v.TestRuns)
	}
	if s := v.String(); !strings.Contains(s, "blame:       "+shas[6]+" calc: rewrite Add") {
		t.Errorf("String() =\n%s", s)
	}
	// The repository's own checkout was left alone.
	if head, _ := f.Repo.Resolve(ctx, "HEAD"); head != shas[10] {
		t.Errorf("HEAD moved to %s", head)
	}
}

func TestInvestigateFlakyTestIsNotBisected(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, _ := flakyRepo(t)
	v, err := Investigate(ctx, goOnly, bisect.Bisector{}, f.Dir, "", "", []string{"TestFlaky"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Two of the four re-runs come first (RerunPlan): run 2 passes.
	if v.Flakiness != (task.Flakiness{Runs: 2, Failures: 1, Verdict: VerdictFlaky}) || v.Bisection != nil || v.TestRuns != 2 {
		t.Errorf("verdict = %+v", v)
	}
}
