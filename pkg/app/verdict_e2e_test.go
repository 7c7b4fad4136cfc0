package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// checkRuns are the check runs named name on the test GitHub's
// repository, in creation order.
func (s *ghService) checkRuns(name string) []ghtest.CheckRun {
	var out []ghtest.CheckRun
	for _, c := range s.srv.CheckRuns(s.owner, s.name) {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// TestGitHubVerdictCheckRun: the red commit gets triage's verdict as the
// neutral check run "redfix / triage" when triage decides: the failing
// test, reliable with its re-run counts, the culprit with bisection's
// confidence, a repair under way. The worker's update of it once the fix is
// published fails (GitHub answers 422): logged, and the task is published
// all the same. The pull request's merge rewrites the same check run with
// the link to the fix pull request, merged; no second check run is ever
// made.
//
// The verdict is written right after triage queues the job, long before
// a worker has reproduced, repaired and gated the failure (go test runs,
// a push): the failed update is the worker's.
func TestGitHubVerdictCheckRun(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Harness.FeedbackRounds = 0
	cfg.Validators.OracleRuns = 1
	svc := startGitHubService(t, ctx, cfg, shopRun(sample))
	const update = "/repos/{owner}/{repo}/check-runs/{check_run_id}"
	svc.srv.Inject("PATCH", update, 1, ghtest.Fault{Status: http.StatusUnprocessableEntity})

	tasks := svc.deliverRed(t, ctx, "7e0c51a2-ab01-11ee-8c90-0242ac120002")
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("want one published task, got %d", len(tasks))
	}
	tk := tasks[0]
	culprit := sample.Commits[3]
	if tk.Bisection.Blame != culprit || tk.Bisection.Confidence <= 0 || tk.Commit != sample.Head {
		t.Fatalf("task at %s: blame %s (confidence %.3f), want %s at %s", tk.Commit, tk.Bisection.Blame, tk.Bisection.Confidence, culprit, sample.Head)
	}
	confidence := fmt.Sprintf("confidence %.0f%%", tk.Bisection.Confidence*100)
	testsvc.Poll(t, time.Minute, "the worker's update of the check run", func() bool { return len(svc.srv.CallsTo("PATCH", update)) == 1 })

	// Triage's verdict stands: the worker's update was refused.
	runs := svc.checkRuns(triage.CheckName)
	if len(runs) != 1 {
		t.Fatalf("%d %q check runs, want 1: %+v", len(runs), triage.CheckName, runs)
	}
	c := runs[0]
	if c.HeadSHA != sample.Head || c.Status != "completed" || c.Conclusion != forge.ConclusionNeutral || c.Creator.Kind != "installation" || c.ExternalID != tk.ID {
		t.Errorf("check run on %s: %s/%s by %s, external id %q", c.HeadSHA, c.Status, c.Conclusion, c.Creator.Kind, c.ExternalID)
	}
	if c.Title != "a repair is under way" {
		t.Errorf("title %q", c.Title)
	}
	for _, want := range []string{"TestVolumeDiscount", "**Re-runs:** reliable: 2 of 2 failed at this commit.", "**Culprit:** `" + task.Short(culprit) + "`",
		confidence} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, c.Summary)
		}
	}
	// Queued, or taken by the worker already when the store was read.
	if !strings.Contains(c.Summary, "**Outcome:** a repair is queued.") && !strings.Contains(c.Summary, "**Outcome:** a worker is repairing it.") {
		t.Errorf("the verdict does not say a repair is under way:\n%s", c.Summary)
	}

	// The fix is merged: the check run links to it.
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	closed := ghtest.WebhookExample(t, "pull_request", "closed")
	p := closed["pull_request"].(map[string]any)
	now := time.Now().UTC().Format(time.RFC3339)
	p["number"], p["html_url"], p["merged"], p["state"], p["merged_at"], p["closed_at"], p["commits"] = pulls[0].Number, tk.PullRequest, true, "closed", now, now, 1
	p["head"].(map[string]any)["ref"] = pulls[0].Head
	closed["number"], closed["repository"] = pulls[0].Number, svc.srv.RepoJSON(svc.owner, svc.name)
	const merged = "7e0c51a3-ab01-11ee-8c90-0242ac120002"
	settled := svc.sys.Expect(merged)
	defer settled.Release()
	if code, body := ghtest.Deliver(t, svc.hook, svc.secret, "pull_request", merged, closed); code != http.StatusAccepted {
		t.Fatalf("merge delivery: %d %s", code, body)
	}
	if _, err := settled.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	runs = svc.checkRuns(triage.CheckName)
	if len(runs) != 1 || runs[0].ID != c.ID {
		t.Fatalf("check runs %+v, want the one of triage's verdict (%d)", runs, c.ID)
	}
	c = runs[0]
	if c.Title != "fix pull request merged" || c.DetailsURL != tk.PullRequest || c.Conclusion != forge.ConclusionNeutral {
		t.Errorf("after the merge: title %q, details %q, conclusion %s", c.Title, c.DetailsURL, c.Conclusion)
	}
	for _, want := range []string{"[the fix pull request](" + tk.PullRequest + "), merged.", confidence, "**Re-runs:** reliable"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, c.Summary)
		}
	}
	if n := len(svc.srv.CallsTo("POST", "/repos/{owner}/{repo}/check-runs")); n != 1 {
		t.Errorf("%d check runs created, want 1", n)
	}
}
