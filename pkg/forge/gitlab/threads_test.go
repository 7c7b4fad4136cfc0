package gitlab_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
)

// reviewWorld is a test GitLab with a project in a subgroup, a fork of it
// the bot can read and one it cannot, and redfix's merge request.
func reviewWorld(t *testing.T) (*gltest.Server, *gitlab.Forge, *gltest.User) {
	t.Helper()
	srv := gltest.New(t)
	bot := srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	srv.AddGroupMember("acme", bot, gltest.Developer)
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "root"},
		{"-C", dir, "branch", "redfix/fix"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	srv.CreateProject("acme/payments/ledger", dir)
	srv.CreateProject("mallory/ledger", dir)
	srv.CreateProject("hidden/ledger", dir)
	srv.AddMember("mallory/ledger", bot, gltest.Reporter)
	d, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken})
	if err != nil {
		t.Fatal(err)
	}
	return srv, d, bot
}

// TestSourceOf: a merge request's source is read from the API: the
// project's own, or a fork's path, or "project N" for a fork the token
// cannot read; with the branch it comes from and the one it merges into.
func TestSourceOf(t *testing.T) {
	srv, d, _ := reviewWorld(t)
	ctx := context.Background()
	const ledger = "acme/payments/ledger"
	own, err := d.OpenChangeRequest(ctx, d.Repo(ledger), forge.NewChangeRequest{Title: "fix", Body: "b", Head: "redfix/fix", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	mallory := srv.AddUser("mallory", "mallory@example.com", "")
	fork := srv.OpenForkMergeRequest(ledger, "mallory/ledger", "redfix/fix", mallory)
	hidden := srv.OpenForkMergeRequest(ledger, "hidden/ledger", "redfix/fix", mallory)
	for iid, want := range map[int64]gitlab.Source{
		int64(own.Number): {Branch: "redfix/fix", Target: "main"},
		fork.IID:          {Fork: "mallory/ledger", Branch: "redfix/fix", Target: "main"},
		hidden.IID:        {Fork: "project ", Branch: "redfix/fix", Target: "main"},
	} {
		got, err := d.SourceOf(ctx, ledger, iid)
		if err != nil || !strings.HasPrefix(got.Fork, want.Fork) || (got.Fork == "") != (want.Fork == "") || got.Branch != want.Branch || got.Target != want.Target {
			t.Errorf("!%d: %+v, %v; want %+v", iid, got, err, want)
		}
	}
	if _, err := d.SourceOf(ctx, ledger, 99); err == nil {
		t.Error("a merge request that does not exist was read")
	}
}

// TestChangesRequested: the note that opened a resolvable thread, while
// the thread is unresolved, is a review requesting changes, its author
// and words as the API tells them; a reply, a resolved thread and a note
// standing alone are none.
func TestChangesRequested(t *testing.T) {
	srv, d, _ := reviewWorld(t)
	ctx := context.Background()
	const ledger = "acme/payments/ledger"
	repo := d.Repo(ledger)
	mr, err := d.OpenChangeRequest(ctx, repo, forge.NewChangeRequest{Title: "fix", Body: "b", Head: "redfix/fix", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	iid := int64(mr.Number)
	dana := srv.AddUser("dana", "dana@example.com", "")
	open := srv.AddThread(ledger, iid, dana, "also handle a zero balance", nil)
	reply := srv.AddThread(ledger, iid, dana, "and a negative one", open)
	closed := srv.AddThread(ledger, iid, dana, "a typo", nil)
	srv.Resolve(ledger, iid, closed)
	alone := srv.AddNote(ledger, iid, dana, "thanks")
	rv, ok, err := d.ChangesRequested(ctx, repo, mr.Number, open.Discussion, open.ID)
	if err != nil || !ok || rv.Author.Login != "dana" || rv.Body != "also handle a zero balance" || rv.State != forge.ReviewChangesRequested || rv.Number != mr.Number || !rv.Repo.Same(repo) {
		t.Errorf("the open thread: %+v, %v, %v", rv, ok, err)
	}
	for name, n := range map[string]*gltest.Note{"reply": reply, "resolved": closed} {
		if _, ok, err := d.ChangesRequested(ctx, repo, mr.Number, n.Discussion, n.ID); err != nil || ok {
			t.Errorf("%s: a request for changes (%v, %v)", name, ok, err)
		}
	}
	if _, ok, err := d.ChangesRequested(ctx, repo, mr.Number, "0000", alone.ID); ok || err == nil {
		t.Errorf("a note standing alone, its thread unknown: %v, %v; want an error", ok, err)
	}
}
