package github_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func TestGitAuthenticatesPerCommandOnly(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	env, err := cl.GitEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := runErr(dir, nil, "git", "clone", "-q", srv.CloneURL("acme", "widgets"), "anon"); err == nil {
		t.Fatalf("clone without the token worked: %s", out)
	}
	run(t, dir, env, "git", "clone", "-q", srv.CloneURL("acme", "widgets"), "w")
	cfg, err := os.ReadFile(filepath.Join(dir, "w", ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "ghp_secret") || strings.Contains(string(cfg), "extraHeader") {
		t.Errorf(".git/config holds the credentials:\n%s", cfg)
	}
	if got := srv.GitStatsOf("acme", "widgets"); got.Denied == 0 || got.UploadPacks == 0 {
		t.Errorf("git stats %+v", got)
	}
}

func TestTokenGoesOnlyToTheConfiguredHost(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	ctx := context.Background()
	env, err := c.GitEnvFor(ctx, srv.CloneURL("acme", "widgets"))
	if err != nil || len(env) == 0 {
		t.Fatalf("the configured host's repository got no credentials: %v %v", env, err)
	}
	for _, other := range []string{"https://git.example/acme/widgets.git", "/tmp/repo", "file:///tmp/repo", "git@github.com:acme/widgets.git"} {
		if env, err := c.GitEnvFor(ctx, other); err != nil || env != nil {
			t.Errorf("%s got credentials %v (%v)", other, env, err)
		}
	}
	pub, err := github.New(github.Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Serves("https://github.com/acme/widgets.git") || pub.Serves("http://github.com/acme/widgets.git") || pub.Serves("https://github.example/acme/widgets.git") {
		t.Error("public GitHub: github.com over https only")
	}
}
