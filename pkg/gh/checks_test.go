package gh_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/ghtest"
)

func TestCheckRunsCreateUpdateAndList(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	head := strings.TrimSpace(run(t, src, nil, "git", "rev-parse", "HEAD"))
	app := srv.NewApp("redfix-test")
	srv.Install("acme", "acme/widgets")
	c, err := gh.New(gh.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	checks := gh.Checks{Clients: c}
	repo := srv.HTMLURL("acme", "widgets")

	id, err := checks.Create(ctx, repo, gh.CheckRun{Name: "redfix / triage", HeadSHA: head, Status: "in_progress"})
	if err != nil {
		t.Fatal(err)
	}
	if err := checks.Update(ctx, repo, id, gh.CheckRun{Name: "redfix / triage", Conclusion: gh.ConclusionFailure, Title: "reliable failure", Summary: "TestAdd fails at this commit", DetailsURL: "https://example.com/t/1"}); err != nil {
		t.Fatal(err)
	}
	// Upsert replaces the run of the same name instead of adding a twin.
	id2, err := checks.Upsert(ctx, repo, gh.CheckRun{Name: "redfix / triage", HeadSHA: head, Conclusion: gh.ConclusionNeutral, Summary: "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	if id2 != id {
		t.Errorf("upsert made run %d; want the existing %d updated", id2, id)
	}
	if _, err := checks.Upsert(ctx, repo, gh.CheckRun{Name: "redfix / .redfix.yaml", HeadSHA: head, Conclusion: gh.ConclusionActionRequired, Summary: "bad"}); err != nil {
		t.Fatal(err)
	}
	got := srv.CheckRuns("acme", "widgets")
	if len(got) != 2 {
		t.Fatalf("check runs: %+v; want 2", got)
	}
	if g := got[0]; g.Status != "completed" || g.Conclusion != "neutral" || g.Title != "redfix / triage" || g.Summary != "flaky" || g.Updates != 2 || g.Creator.Kind != "installation" {
		t.Errorf("triage run: %+v", g)
	}
	listed, err := checks.ForCommit(ctx, repo, head, "redfix / .redfix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Conclusion != "action_required" || listed[0].Summary != "bad" || listed[0].HeadSHA != head {
		t.Errorf("listed: %+v", listed)
	}
	all, err := checks.ForCommit(ctx, repo, "main", "")
	if err != nil || len(all) != 2 {
		t.Errorf("all runs on main: %+v, %v; want 2", all, err)
	}

	if err := checks.Update(ctx, repo, id, gh.CheckRun{Conclusion: gh.ConclusionSuccess}); err == nil {
		t.Error("an update without a name was sent")
	}
	if _, err := checks.Create(ctx, "https://elsewhere.example/acme/widgets", gh.CheckRun{Name: "x", HeadSHA: head}); !errors.Is(err, gh.ErrNotServed) {
		t.Errorf("a repository elsewhere: %v; want ErrNotServed", err)
	}
	if _, err := checks.Create(ctx, repo, gh.CheckRun{Name: "x", HeadSHA: strings.Repeat("0", 40)}); err == nil {
		t.Error("a check run on a commit the repository lacks was accepted")
	}
}

func TestCheckRunsNeedAnApp(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	head := strings.TrimSpace(run(t, src, nil, "git", "rev-parse", "HEAD"))
	checks := gh.Checks{Clients: tokenClients(t, srv, nil)}
	_, err := checks.Create(context.Background(), srv.HTMLURL("acme", "widgets"), gh.CheckRun{Name: "x", HeadSHA: head, Conclusion: gh.ConclusionSuccess})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a user's token wrote a check run: %v; GitHub answers 403", err)
	}
}
