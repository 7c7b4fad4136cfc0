package gitlab_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
)

// TestIdentityOnAnInstanceUnderAPath: an instance served under a relative
// URL serves only the projects under that path, with a namespace and a
// name; its merge requests' pages are read back to the project and
// number; its token goes to git only for its own projects, over its own
// scheme, and never to another host.
func TestIdentityOnAnInstanceUnderAPath(t *testing.T) {
	d, err := gitlab.New(gitlab.Config{URL: "https://git.example.com/gitlab/", Token: "glpat-identity0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	ledger := forge.RepoID{Host: "git.example.com", Path: "gitlab/acme/payments/ledger"}
	for repo, want := range map[forge.RepoID]bool{
		ledger: true,
		{Host: "git.example.com", Path: "gitlab/acme/shop"}:        true,
		{Host: "git.example.com", Path: "acme/payments/ledger"}:    false, // not under the instance's path
		{Host: "git.example.com", Path: "gitlab/ledger"}:           false, // no namespace
		{Host: "gitlab.com", Path: "gitlab/acme/payments/ledger"}:  false,
		{Host: "git.example.com:8443", Path: "gitlab/acme/ledger"}: false,
	} {
		if got := d.Serves(repo); got != want {
			t.Errorf("Serves(%s) = %v, want %v", repo, got, want)
		}
	}
	if r := d.Repo("acme/payments/ledger"); !r.Same(ledger) {
		t.Errorf("Repo: %s", r)
	}
	repo, n, ok := d.ChangeOf("https://git.example.com/gitlab/acme/payments/ledger/-/merge_requests/12")
	if !ok || n != 12 || !repo.Same(ledger) {
		t.Errorf("ChangeOf: %s %d %v", repo, n, ok)
	}
	for _, u := range []string{
		"https://git.example.com/gitlab/acme/payments/ledger/-/issues/12",
		"http://git.example.com/gitlab/acme/payments/ledger/-/merge_requests/12",
		"https://github.com/acme/ledger/pull/12",
		"https://git.example.com/gitlab/acme/payments/ledger/-/merge_requests/0",
	} {
		if _, _, ok := d.ChangeOf(u); ok {
			t.Errorf("%s read as a merge request", u)
		}
	}
	if d.FixKey(ledger) != "git.example.com/gitlab/acme/payments/ledger" {
		t.Errorf("fix key %q: want the host with the full path", d.FixKey(ledger))
	}
	ctx := context.Background()
	for u, want := range map[string]bool{
		"https://git.example.com/gitlab/acme/payments/ledger.git":          true,
		"http://git.example.com/gitlab/acme/payments/ledger.git":           false,
		"https://evil.example/gitlab/acme/payments/ledger.git":             false,
		"https://oauth2:other@git.example.com/gitlab/acme/payments/ledger": false,
		"https://git.example.com/other/acme/ledger.git":                    false,
	} {
		env, err := d.GitEnv(ctx, u)
		if err != nil || (env != nil) != want {
			t.Errorf("GitEnv(%s) = %v, %v; want credentials %v", u, env, err, want)
		}
		if env != nil && strings.Contains(strings.Join(env, " "), "glpat-identity") {
			t.Errorf("the token is in the environment in clear: %v", env)
		}
	}
	if !gitlab.UserOf("project_1207_bot_3f9a2b1c").Bot || !gitlab.UserOf("group_12_bot").Bot || gitlab.UserOf("dana").Bot {
		t.Error("the accounts GitLab makes for access tokens are bots, people are not")
	}
}
