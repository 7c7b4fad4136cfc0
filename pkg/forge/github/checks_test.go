package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func TestCheckRunsCreateUpdateAndList(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	head := strings.TrimSpace(run(t, src, nil, "git", "rev-parse", "HEAD"))
	app := srv.NewApp("redfix-test")
	srv.Install("acme", "acme/widgets")
	c, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	checks := github.NewForge(c)
	repo := checks.Repo("acme/widgets")

	id, err := checks.CreateCheck(ctx, repo, forge.Check{Name: "redfix / triage", Commit: head, Status: "in_progress"})
	if err != nil {
		t.Fatal(err)
	}
	if err := checks.UpdateCheck(ctx, repo, id, forge.Check{Name: "redfix / triage", Conclusion: forge.ConclusionFailure, Title: "reliable failure", Summary: "TestAdd fails at this commit", DetailsURL: "https://example.com/t/1"}); err != nil {
		t.Fatal(err)
	}
	// Upsert replaces the run of the same name instead of adding a twin.
	id2, err := forge.UpsertCheck(ctx, checks, repo, forge.Check{Name: "redfix / triage", Commit: head, Conclusion: forge.ConclusionNeutral, Summary: "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	if id2 != id {
		t.Errorf("upsert made run %d; want the existing %d updated", id2, id)
	}
	if _, err := forge.UpsertCheck(ctx, checks, repo, forge.Check{Name: "redfix / .redfix.yaml", Commit: head, Conclusion: forge.ConclusionActionRequired, Summary: "bad"}); err != nil {
		t.Fatal(err)
	}
	got := srv.CheckRuns("acme", "widgets")
	if len(got) != 2 {
		t.Fatalf("check runs: %+v; want 2", got)
	}
	if g := got[0]; g.Status != "completed" || g.Conclusion != "neutral" || g.Title != "redfix / triage" || g.Summary != "flaky" || g.Updates != 2 || g.Creator.Kind != "installation" {
		t.Errorf("triage run: %+v", g)
	}
	listed, err := checks.CommitChecks(ctx, repo, head, "redfix / .redfix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Conclusion != "action_required" || listed[0].Summary != "bad" || listed[0].Commit != head {
		t.Errorf("listed: %+v", listed)
	}
	all, err := checks.CommitChecks(ctx, repo, "main", "")
	if err != nil || len(all) != 2 {
		t.Errorf("all runs on main: %+v, %v; want 2", all, err)
	}

	if err := checks.UpdateCheck(ctx, repo, id, forge.Check{Conclusion: forge.ConclusionSuccess}); err == nil {
		t.Error("an update without a name was sent")
	}
	for _, elsewhere := range []forge.RepoID{{Host: "elsewhere.example", Path: "acme/widgets"}, {Host: repo.Host, Path: "acme/sub/widgets"}} {
		if _, err := checks.CreateCheck(ctx, elsewhere, forge.Check{Name: "x", Commit: head}); !errors.Is(err, forge.ErrNotServed) {
			t.Errorf("a repository elsewhere (%s): %v; want ErrNotServed", elsewhere, err)
		}
	}
	if _, err := checks.CreateCheck(ctx, repo, forge.Check{Name: "x", Commit: strings.Repeat("0", 40)}); err == nil {
		t.Error("a check run on a commit the repository lacks was accepted")
	}
}

func TestCheckRunsNeedAnApp(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	head := strings.TrimSpace(run(t, src, nil, "git", "rev-parse", "HEAD"))
	checks := github.NewForge(tokenClients(t, srv, nil))
	_, err := checks.CreateCheck(context.Background(), checks.Repo("acme/widgets"), forge.Check{Name: "x", Commit: head, Conclusion: forge.ConclusionSuccess})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a user's token wrote a check run: %v; GitHub answers 403", err)
	}
}
