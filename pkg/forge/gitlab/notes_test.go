package gitlab_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
)

// TestPermissionIsTheMemberAPIs: who may write to a project in a subgroup
// is GitLab's member API's answer, the groups above it included: a
// Developer of the subgroup and a Maintainer of the top group may; a
// Reporter of the project, an account that is no member of the project or
// of any group above it, a member of a sibling group, and a name that is
// no account may not.
func TestPermissionIsTheMemberAPIs(t *testing.T) {
	srv := gltest.New(t)
	bot := srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	srv.AddGroupMember("acme", bot, gltest.Developer)
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "root").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v: %s", err, out)
	}
	const ledger = "acme/payments/ledger"
	srv.CreateProject(ledger, dir)
	srv.AddGroupMember("acme/payments", srv.AddUser("dana", "dana@example.com", ""), gltest.Developer)
	srv.AddGroupMember("acme", srv.AddUser("mo", "mo@example.com", ""), gltest.Maintainer)
	srv.AddMember(ledger, srv.AddUser("rita", "rita@example.com", ""), gltest.Reporter)
	srv.AddGroupMember("acme/web", srv.AddUser("wes", "wes@example.com", ""), gltest.Maintainer)
	srv.AddUser("eve", "eve@elsewhere.example", "")

	d, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken})
	if err != nil {
		t.Fatal(err)
	}
	repo := d.Repo(ledger)
	for user, write := range map[string]bool{"dana": true, "mo": true, "rita": false, "eve": false, "wes": false, "nobody-at-all": false} {
		p, err := d.Permission(context.Background(), repo, user)
		if err != nil || p.Write != write {
			t.Errorf("%s's permission on %s: %+v, %v; want write %v", user, ledger, p, err, write)
		}
	}
	if _, err := d.Permission(context.Background(), forge.RepoID{Host: "github.com", Path: "acme/ledger"}, "dana"); err == nil {
		t.Error("a permission on a repository the instance does not serve was answered")
	}
}
