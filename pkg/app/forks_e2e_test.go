package app

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// TestForkRunRefusedOwnRunRepaired: the central configuration handles
// forks and runs on pull requests, and the repository's .redfix.yaml on
// its default branch says forks: false. A red run of a pull request from a
// fork (its head commit lacks that line: the fork's author wrote it) is
// dropped with the reason, before any work; the same failure on the
// repository's own branch is repaired to a pull request.
func TestForkRunRefusedOwnRunRepaired(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := goShopWithFile(t, ctx, "version: 1\nforks: false\n")
	forkHead, err := gitrepo.Repo{Dir: r.Dir}.Resolve(ctx, r.Head+"^")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Harness.FeedbackRounds = 0
	cfg.GitHub.Forks = true
	cfg.GitHub.Repositories = []config.RepositoryEvents{{Name: "acme/shop", PullRequests: true}}
	svc := startGitHubService(t, ctx, cfg, r)
	svc.srv.CreateRepo("mallory", "shop", r.Dir)
	fork := svc.srv.AddRun("acme", "shop", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: forkHead, HeadRepo: "mallory/shop", Event: "pull_request", Conclusion: "failure",
		CreatedAt: time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second),
		Jobs:      []*ghtest.Job{{Name: r.Job, Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: r.Artifact, Zip: ghtest.Zip(r.Files)}},
	})

	tasks := svc.deliverRun(t, ctx, fork, "f0a4e2d3-aa01-11ee-8c90-0242ac120002")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks from the fork's run, want 1", len(tasks))
	}
	tk := tasks[0]
	want := "pull request from a fork (mallory/shop): not handled: refused by its .redfix.yaml at " + r.Head + " (forks: false)"
	if tk.Status != task.StatusDropped || tk.Reason != want || triage.ReasonClass(tk.Reason) != triage.ReasonFork || tk.Fork != "mallory/shop" {
		t.Errorf("the fork's task: %s %q (fork %q); want dropped with %q", tk.Status, tk.Reason, tk.Fork, want)
	}
	if len(tk.Rounds) != 0 || tk.Bisection.Blame != "" {
		t.Errorf("work was done on the fork's run: %d rounds, blame %q", len(tk.Rounds), tk.Bisection.Blame)
	}

	tasks = svc.deliverRed(t, ctx, "f0a4e2d4-aa01-11ee-8c90-0242ac120002")
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished || tasks[0].Fork != "" {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("the repository's own run: want one published task, got %d", len(tasks))
	}
	if n := len(svc.pulls()); n != 1 {
		t.Errorf("%d pull requests, want 1 for the repository's own run", n)
	}
}
