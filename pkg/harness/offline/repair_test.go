package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/workspace"
)

// The repairs end to end: each scenario of testdata/repairs is a tiny
// module's history (a good state, commit 1 that breaks the failing test,
// and a later unrelated commit), repaired by the policy through the
// production loop and the real tools.

const maxSteps = 40

// repairTask makes the scenario's repository and the task triage would
// hand over, commit 1 blamed.
func repairTask(t *testing.T, ctx context.Context, sc scenario) (string, task.Task) {
	t.Helper()
	const subject = "Tidy up and extend"
	dir, shas := sc.repo(t, ctx, "Add the "+sc.name+" package", subject, "Unrelated follow-up")
	good, blame, head := shas[0], shas[1], shas[2]
	out, err := golang.Runner{Timeout: 2 * time.Minute}.Run(ctx, dir, []string{sc.failing}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) == 0 {
		t.Fatalf("%s does not fail at the head: %s", sc.failing, out.Summary())
	}
	return dir, task.Task{
		ID: "task-" + sc.name, Repo: dir, Commit: head, Failures: out.Failed,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: good, Bad: head, Blame: blame, Subject: subject, Steps: 2},
		Status:    task.StatusRunning,
	}
}

// runEpisode runs one episode of tk in ws through the production loop, with
// policy p, and returns the result and the steps read back from the
// trajectory.
func runEpisode(t *testing.T, ctx context.Context, ws *workspace.Workspace, tk task.Task, p harness.Policy) (harness.Result, []harness.Step) {
	t.Helper()
	var traj bytes.Buffer
	log := zaptest.NewLogger(t)
	h := harness.New(harness.Config{MaxSteps: maxSteps}, p, golang.Driver{Tests: golang.Runner{Timeout: 2 * time.Minute}}, nil, log)
	res, err := h.Run(ctx, ws, tk, &traj)
	if err != nil {
		t.Fatalf("episode of %s: %v (result %+v)", tk.ID, err, res)
	}
	var steps []harness.Step
	for i, line := range strings.Split(strings.TrimSuffix(traj.String(), "\n"), "\n") {
		if line == "" {
			t.Fatalf("trajectory line %d is empty:\n%s", i+1, traj.String())
		}
		var s harness.Step
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("trajectory line %d is not a step: %v\n%s", i+1, err, line)
		}
		if s.N != i+1 || s.Policy != p.Name() {
			t.Errorf("trajectory line %d: step %d by %q", i+1, s.N, s.Policy)
		}
		steps = append(steps, s)
	}
	if len(steps) != res.Steps {
		t.Errorf("trajectory has %d lines for %d steps", len(steps), res.Steps)
	}
	return res, steps
}

func TestRepairs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in real repositories")
	}
	for _, sc := range loadScenarios(t, "repairs") {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			dir, tk := repairTask(t, ctx, sc)
			ws, err := workspace.Open(ctx, dir, tk.Commit, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			res, steps := runEpisode(t, ctx, ws, tk, newPolicy(zaptest.NewLogger(t)))
			for _, s := range steps {
				t.Logf("%2d %-16s err=%-5v %s", s.N, s.Action.Name, s.Observation.IsError, s.Action.Thought)
			}
			t.Logf("stop=%s steps=%d passed=%v\nsummary: %s\npatch:\n%s", res.Stop, res.Steps, res.TestsPassed, res.Summary, res.Patch)
			checkSteps(t, steps)
			if res.Steps > maxSteps {
				t.Errorf("took %d steps, budget %d", res.Steps, maxSteps)
			}
			if res.Stop != harness.StopExit {
				t.Errorf("stopped by %q, want the policy's exit", res.Stop)
			}
			// The oracle, run here on the patched workspace.
			out, err := golang.Runner{Timeout: 2 * time.Minute}.Run(ctx, ws.Dir, []string{sc.failing}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if sc.revert {
				// The fix is a revert of the blame commit: tried, undone,
				// and said so; no patch is left for a fix pull request.
				if res.TestsPassed || out.OK() || strings.TrimSpace(res.Patch) != "" {
					t.Errorf("a revert was kept: passed=%v patch:\n%s", res.TestsPassed, res.Patch)
				}
				if !strings.HasPrefix(res.Summary, "No fix found: only a revert passes.") {
					t.Errorf("summary = %q", res.Summary)
				}
				if !res.RevertPasses {
					t.Error("the result does not say that only a revert passes: it reads as finding nothing")
				}
				return
			}
			if res.RevertPasses {
				t.Errorf("the result says only a revert passes, in a scenario that is not a revert: %s", res.Summary)
			}
			if !sc.fixable {
				if res.TestsPassed || out.OK() {
					t.Errorf("an unfixable bug passed: %s", res.Patch)
				}
				if strings.TrimSpace(res.Patch) != "" {
					t.Errorf("left a patch behind:\n%s", res.Patch)
				}
				if !strings.Contains(res.Summary, "No candidate passed") {
					t.Errorf("summary = %q", res.Summary)
				}
				return
			}
			if !out.OK() {
				t.Fatalf("%s still fails after the patch: %s\n%s", sc.failing, out.Summary(), out.Output)
			}
			if !res.TestsPassed || strings.TrimSpace(res.Patch) == "" {
				t.Errorf("result: passed=%v patch=%q", res.TestsPassed, res.Patch)
			}
			if !strings.HasPrefix(res.Summary, "Changed ") && !strings.HasPrefix(res.Summary, "In ") {
				t.Errorf("summary of a fix = %q", res.Summary)
			}
			if strings.Contains(res.Patch, "_test.go") {
				t.Errorf("the patch edits a test:\n%s", res.Patch)
			}
			// Whole package still green: no regression.
			all, err := golang.Runner{Timeout: 2 * time.Minute}.RunPackages(ctx, ws.Dir, []string{"./..."})
			if err != nil {
				t.Fatal(err)
			}
			if !all.OK() {
				t.Errorf("regressions after the patch: %s", all.Summary())
			}
		})
	}
}

// checkSteps checks what the policy assumes of the real tools'
// observations, step by step, as the trajectory holds them.
func checkSteps(t *testing.T, steps []harness.Step) {
	t.Helper()
	for i, s := range steps {
		a, obs := s.Action, s.Observation
		if a.Name != tools.Exit && strings.TrimSpace(a.Thought) == "" {
			t.Errorf("step %d (%s) has no thought", s.N, a.Name)
		}
		if strings.HasPrefix(obs.Content, "Not run: ") {
			t.Errorf("step %d (%s) was refused as a repeat: %s", s.N, a.Name, obs.Content)
		}
		if i > 0 && steps[i-1].Action.Name == a.Name && bytes.Equal(steps[i-1].Action.Args, a.Args) {
			t.Errorf("steps %d and %d are the same action %s %s", s.N-1, s.N, a.Name, a.Args)
		}
		switch a.Name {
		case tools.ReadFile, tools.GoToLine:
			if obs.IsError {
				t.Errorf("step %d (%s %s) failed: %s", s.N, a.Name, a.Args, obs.Content)
				continue
			}
			// Every line of the listing is one the policy reads back.
			body := strings.Split(strings.TrimSuffix(obs.Content, "\n"), "\n")[1:]
			want := 0
			for _, l := range body {
				if !strings.HasPrefix(l, "[") {
					want++
				}
			}
			if obs.Listing == nil || len(obs.Listing.Lines) == 0 || len(obs.Listing.Lines) != want {
				t.Errorf("step %d (%s): the policy reads %v of the %d listed lines:\n%s", s.N, a.Name, obs.Listing, want, obs.Content)
				continue
			}
			for _, l := range obs.Listing.Lines {
				if !strings.Contains(obs.Content, fmt.Sprintf("%6d\t%s\n", l.N, l.Text)) {
					t.Errorf("step %d (%s): line %d as read, %q, is not as listed", s.N, a.Name, l.N, l.Text)
				}
			}
		case tools.GetDiffDetails:
			if obs.IsError || obs.Commit == nil {
				t.Errorf("step %d: no diff: %s", s.N, obs.Content)
			} else if files, _ := unidiff.Parse(obs.Commit.Diff); len(files) == 0 {
				t.Errorf("step %d: the policy reads no diff in:\n%s", s.N, obs.Commit.Diff)
			}
		case tools.Edit:
			if obs.Edit == nil {
				t.Errorf("step %d: edit without an EditResult: %s", s.N, obs.Content)
			} else if !obs.Edit.Applied {
				t.Errorf("step %d: edit not applied: %s", s.N, obs.Content)
			}
		case tools.RunTests:
			if obs.Tests == nil {
				t.Errorf("step %d: run_tests without a TestsResult: %s", s.N, obs.Content)
			} else if obs.IsError {
				// Failing tests are the tool's answer, not an error.
				t.Errorf("step %d: run_tests ok=%v and is_error: %s", s.N, obs.Tests.OK, obs.Content)
			}
		}
	}
	if n := len(steps); n == 0 || steps[n-1].Action.Name != tools.Exit {
		t.Errorf("the episode does not end with exit")
	}
}

// TestPolicyReuse runs episodes of different tasks, one after the other,
// with one Policy value: each must start afresh and fix its own bug.
func TestPolicyReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in real repositories")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := newPolicy(zaptest.NewLogger(t))
	for i, name := range []string{"arithmetic-sign", "comparison", "arithmetic-sign"} {
		sc := scenarioNamed(t, "repairs", name)
		dir, tk := repairTask(t, ctx, sc)
		ws, err := workspace.Open(ctx, dir, tk.Commit, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		res, steps := runEpisode(t, ctx, ws, tk, p)
		ws.Close()
		t.Logf("episode %d (%s): stop=%s steps=%d passed=%v", i+1, name, res.Stop, res.Steps, res.TestsPassed)
		checkSteps(t, steps)
		if steps[0].Action.Name != tools.GetTaskDetails {
			t.Errorf("episode %d (%s) starts with %s, not with the task", i+1, name, steps[0].Action.Name)
		}
		if res.Stop != harness.StopExit || !res.TestsPassed {
			t.Errorf("episode %d (%s): stop=%s passed=%v summary=%q", i+1, name, res.Stop, res.TestsPassed, res.Summary)
		}
		// The file the blame commit writes.
		if len(sc.commits[1]) != 1 {
			t.Fatalf("%s: the blame commit writes %d files", name, len(sc.commits[1]))
		}
		file := sc.commits[1][0].Name
		if !strings.Contains(res.Patch, "+++ b/"+file) || strings.Count(res.Patch, "+++ ") != 1 {
			t.Errorf("episode %d (%s) patches other than %s:\n%s", i+1, name, file, res.Patch)
		}
		// Nothing of the episode before: no hypothesis numbering carried
		// over, no file of the other task touched.
		for _, s := range steps {
			var args struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(s.Action.Args, &args)
			if args.Path != "" && path.Dir(args.Path) != path.Dir(file) {
				t.Errorf("episode %d (%s) step %d acts on %s, outside its task", i+1, name, s.N, args.Path)
			}
		}
		// Each failed candidate is an edit and its undo; the summary counts
		// this episode's only.
		edits := 0
		for _, s := range steps {
			if s.Action.Name == tools.Edit {
				edits++
			}
		}
		earlier := fmt.Sprintf(" %d earlier candidate(s)", (edits-1)/2)
		if (edits > 1) != strings.Contains(res.Summary, earlier) || (edits == 1 && strings.Contains(res.Summary, "earlier candidate")) {
			t.Errorf("episode %d (%s) made %d edits; summary: %s", i+1, name, edits, res.Summary)
		}
	}
}
