package commitcheck

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// verdictMem holds the tasks and fixes the verdict's check run reads.
type verdictMem struct {
	tasks map[string]task.Task
	fixes map[string]task.Fix // by "owner/name#number"
}

func (m verdictMem) GetTask(_ context.Context, id string) (task.Task, error) {
	t, ok := m.tasks[id]
	if !ok {
		return t, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
	}
	return t, nil
}

func (m verdictMem) GetFix(_ context.Context, repo string, n int) (task.Fix, error) {
	f, ok := m.fixes[fmt.Sprintf("%s#%d", repo, n)]
	if !ok {
		return f, task.ErrNoFix
	}
	return f, nil
}

// TestVerdictCheckIsOnePerCommit: the verdicts on one commit are one
// check run, whoever writes it: a report and its redelivery, a second
// report's group, the worker's settled task, the pull request's merge.
// Each write shows every task it lists as the store has them now, and
// only tasks of the repository at the commit. A repository elsewhere, a commit that is not whole, and GitHub refusing a
// request change nothing and stop nothing.
func TestVerdictCheckIsOnePerCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := r.CommitAll(ctx, "shop: a module")
	if err != nil {
		t.Fatal(err)
	}
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "shop", dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/shop")
	clients, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	mem := verdictMem{tasks: map[string]task.Task{}, fixes: map[string]task.Fix{}}
	hub := github.NewForge(clients)
	v := &Check{Forges: forge.New(hub), Store: mem, Log: zaptest.NewLogger(t)}
	repo := srv.CloneURL("acme", "shop")

	a := task.Task{ID: "20261129T001500Z-aaaaaaaaaaaa", Repo: repo, Commit: head, Status: task.StatusQueued,
		Failures:  []task.Failure{{Package: "example.com/shop/pricing", Test: "TestVolumeDiscount"}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Blame: strings.Repeat("b", 40), Confidence: 0.96, Steps: 5, Finding: "culprit"}}
	b := task.Task{ID: "20261129T001600Z-bbbbbbbbbbbb", Repo: repo, Commit: head, Status: task.StatusDropped, Reason: "flaky: 1/3 runs failed",
		Failures: []task.Failure{{Package: "example.com/shop/cart", Test: "TestTotal"}}}
	mem.tasks[a.ID], mem.tasks[b.ID] = a, b
	v.Decided(ctx, repo, []triage.Outcome{{Task: &a}})
	v.Decided(ctx, repo, []triage.Outcome{{Task: &a}}) // the report, redelivered
	v.Decided(ctx, repo, []triage.Outcome{{Task: &b}}) // another report of the commit

	// The worker publishes a's revert, which is then merged.
	pr := srv.HTMLURL("acme", "shop") + "/pull/3"
	a.Status, a.Reason, a.PullRequest = task.StatusPublished, "reverted the culprit: no patch passed the gates", pr
	mem.tasks[a.ID] = a
	v.Settled(ctx, a)
	mem.fixes["acme/shop#3"] = task.Fix{Repo: "acme/shop", Number: 3, URL: pr, TaskID: a.ID, Kind: task.KindRevert, State: task.FixLanded}
	v.Outcome(ctx, mem.fixes["acme/shop#3"])

	// Nothing is sent for these, and a refused request is only logged.
	v.Settled(ctx, task.Task{ID: "x", Repo: "https://git.example/acme/shop.git", Commit: head, Status: task.StatusQueued})
	v.Settled(ctx, task.Task{ID: "y", Repo: repo, Commit: head[:12], Status: task.StatusQueued})
	srv.Inject("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", 1, ghtest.Fault{Status: http.StatusUnprocessableEntity})
	v.Settled(ctx, task.Task{ID: "z", Repo: repo, Commit: head, Status: task.StatusQueued})

	// The check run's external id names a task of another repository (as
	// another App's check run of the same name could): it is not shown.
	runs := srv.CheckRuns("acme", "shop")
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
	}
	mem.tasks["elsewhere"] = task.Task{ID: "elsewhere", Repo: "https://github.com/acme/private.git", Commit: head, Status: task.StatusQueued,
		Failures: []task.Failure{{Package: "example.com/private", Test: "TestSecretThing"}}}
	if err := hub.UpdateCheck(ctx, hub.Repo("acme/shop"), runs[0].ID, forge.Check{Name: triage.CheckName, ExternalID: "elsewhere," + a.ID + "," + b.ID}); err != nil {
		t.Fatal(err)
	}
	v.Settled(ctx, a)

	runs = srv.CheckRuns("acme", "shop")
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
	}
	c := runs[0]
	if c.Name != triage.CheckName || c.HeadSHA != head || c.Conclusion != forge.ConclusionNeutral || c.Updates != 6 {
		t.Errorf("check run %q on %s: %s, %d updates; want 6", c.Name, c.HeadSHA, c.Conclusion, c.Updates)
	}
	if strings.Contains(c.Summary, "TestSecretThing") {
		t.Errorf("another repository's task is shown:\n%s", c.Summary)
	}
	if c.ExternalID != a.ID+","+b.ID || c.DetailsURL != pr {
		t.Errorf("external id %q, details %q", c.ExternalID, c.DetailsURL)
	}
	if want := "2 failure groups: revert pull request merged; flaky: not repaired"; c.Title != want {
		t.Errorf("title %q, want %q", c.Title, want)
	}
	for _, want := range []string{"[the revert pull request](" + pr + "), merged.", "confidence 96%", "not repaired: flaky: 1/3 runs failed", "`example.com/shop/cart.TestTotal`"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, c.Summary)
		}
	}
	if n := len(srv.CallsTo("POST", "/repos/{owner}/{repo}/check-runs")); n != 1 {
		t.Errorf("%d check runs created, want 1", n)
	}
}
