package github_test

import (
	"context"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func TestTokenClientOnEnterpriseBaseURL(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	if c.APIURL() != srv.APIURL() {
		t.Fatalf("api url %q, want %q", c.APIURL(), srv.APIURL())
	}
	cl, err := c.ForRepo(context.Background(), "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if repo.GetDefaultBranch() != "main" || repo.GetCloneURL() != srv.CloneURL("acme", "widgets") {
		t.Fatalf("repository %s: default branch %q, clone url %q", repo.GetFullName(), repo.GetDefaultBranch(), repo.GetCloneURL())
	}
	// A wrong token is refused.
	bad, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := bad.ForRepo(context.Background(), "acme", "widgets")
	if _, resp, err := bc.Repositories.Get(context.Background(), "acme", "widgets"); err == nil || resp.StatusCode != 401 {
		t.Fatalf("bad token: err %v", err)
	}
}

func TestAppInstallationClientsAreSharedPerInstallation(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	srv.CreateRepo("acme", "gears", src)
	srv.CreateRepo("other", "tools", src)
	app := srv.NewApp("redfix-test")
	acme := srv.Install("acme", "acme/widgets", "acme/gears")
	other := srv.Install("other", "other/tools")

	c, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := c.ForRepo(ctx, "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.ForRepo(ctx, "acme", "gears")
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.ForRepo(ctx, "other", "tools")
	if err != nil {
		t.Fatal(err)
	}
	if w != g {
		t.Error("two repositories of one installation got two clients")
	}
	if w == o || w.Installation != acme.ID || o.Installation != other.ID {
		t.Errorf("installations: widgets %d, tools %d; want %d and %d", w.Installation, o.Installation, acme.ID, other.ID)
	}
	for _, cl := range []*github.Client{w, g, w} {
		if _, _, err := cl.Repositories.Get(ctx, "acme", "widgets"); err != nil {
			t.Fatal(err)
		}
	}
	// An installation's token does not open another installation's
	// repository.
	if _, resp, err := o.Repositories.Get(ctx, "acme", "widgets"); err == nil || resp.StatusCode != 404 {
		t.Errorf("other installation reading acme/widgets: %v", err)
	}
	srv.Lock()
	issued := acme.TokensIssued
	srv.Unlock()
	if issued != 1 {
		t.Errorf("installation tokens minted: %d, want 1 (shared, cached)", issued)
	}
	// A repository where the App is not installed.
	srv.CreateRepo("nobody", "x", src)
	if _, err := c.ForRepo(ctx, "nobody", "x"); err == nil {
		t.Error("a repository without the App got a client")
	}
}
