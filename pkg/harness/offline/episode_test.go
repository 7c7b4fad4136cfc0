package offline_test

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// failingTask is the task of a reproduction at head in the repository at
// dir: failing is run once through drv and must fail there; the task
// carries its failures, reliable, and the blame when bis has one.
func failingTask(t testing.TB, ctx context.Context, drv tools.Language, dir, head, failing, id string, bis task.Bisection) task.Task {
	t.Helper()
	out, err := drv.Run(ctx, dir, []string{failing}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) == 0 {
		t.Fatalf("%s does not fail at the head: %s\n%s", failing, out.Summary(), out.Output)
	}
	return task.Task{ID: id, Repo: dir, Commit: head, Failures: out.Failed, Bisection: bis,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"}, Status: task.StatusRunning}
}

// repairOffline runs the offline policy on tk, within steps, in a
// workspace at the task's commit (closed when the test ends), logs each
// step and the result, and returns both.
func repairOffline(t testing.TB, ctx context.Context, drv tools.Language, tk task.Task, steps int) (harness.Result, *workspace.Workspace) {
	t.Helper()
	ws, err := workspace.Open(ctx, tk.Repo, tk.Commit, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	log := zaptest.NewLogger(t)
	h := harness.New(harness.Config{MaxSteps: steps}, newPolicy(log), nil, nil, log).WithLanguage(drv)
	res, err := h.Run(ctx, ws, tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.History {
		t.Logf("%2d %-16s err=%-5v %s", s.N, s.Action.Name, s.Observation.IsError, s.Action.Thought)
	}
	t.Logf("stop=%s steps=%d passed=%v tested=%d before=%d\nsummary: %s\npatch:\n%s",
		res.Stop, res.Steps, res.TestsPassed, res.PatchesTested, res.TriedBefore, res.Summary, res.Patch)
	return res, ws
}
