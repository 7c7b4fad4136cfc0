package forgetest

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

// testIdentity: a repository is known by its host and full path, its
// driver serves it and no other host's, and the registry finds it there.
func testIdentity(t *testing.T, b Backend) {
	f := newFixture(t, b, "identity")
	if f.d.Name() == "" {
		t.Error("the driver has no name")
	}
	if f.repo.Name() != "identity" || f.repo.Host == "" || strings.HasSuffix(f.repo.Path, ".git") {
		t.Errorf("the repository at %s is %+v: want its host and full path, ending in its name", f.url, f.repo)
	}
	if !f.d.Serves(f.repo) {
		t.Errorf("the driver does not serve its own repository %s", f.repo)
	}
	elsewhere := forge.RepoID{Host: "forge.invalid", Path: f.repo.Path}
	if f.d.Serves(elsewhere) {
		t.Errorf("the driver serves %s, on another host", elsewhere)
	}
	forges := forge.New(f.d)
	if d, id, err := forges.ForURL(f.url); err != nil || d != f.d || !id.Same(f.repo) {
		t.Errorf("the registry chose %v for %s (%v, %v)", d, f.url, id, err)
	}
	if _, err := forges.For(elsewhere); err == nil {
		t.Errorf("the registry chose a driver for %s", elsewhere)
	}
	for _, u := range []string{f.url, "not a URL", "https://forge.invalid/" + f.repo.Path + "/pull/1"} {
		if repo, n, ok := f.d.ChangeOf(u); ok {
			t.Errorf("%q read as change request %d of %s", u, n, repo)
		}
	}
}

// testCredentials: git reaches the repository with the driver's
// credentials, given to one command, and not without them.
func testCredentials(t *testing.T, b Backend) {
	f := newFixture(t, b, "credentials")
	c := need[Credentials](t, f.d)
	if out, err := gitErr(f.dir, nil, "push", "-q", f.url, f.main+":refs/heads/anonymous"); err == nil {
		t.Fatalf("a push without credentials was taken:\n%s", out)
	}
	cred, err := c.Credentials(context.Background(), f.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cred.Secrets {
		if s == "" || strings.Contains(f.url, s) {
			t.Errorf("a secret is empty or in the clone URL: %q", s)
		}
	}
	git(t, f.dir, cred.Env, "push", "-q", f.url, f.main+":refs/heads/redfix/pushed")
	if out := git(t, f.dir, cred.Env, "ls-remote", f.url, "refs/heads/redfix/pushed"); !strings.HasPrefix(out, f.main) {
		t.Errorf("the pushed branch is not there: %q", out)
	}
	if _, ok := f.d.(forge.CloneAuth); ok {
		env, err := forge.New(f.d).GitEnv(context.Background(), f.url)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := gitErr(f.dir, env, "ls-remote", f.url, "refs/heads/main"); err != nil || !strings.HasPrefix(out, f.main) {
			t.Errorf("git with the clone credentials: %v\n%s", err, out)
		}
	}
}
