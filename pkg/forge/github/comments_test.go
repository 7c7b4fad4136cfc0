package github_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func TestCommentReactAndClose(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	d := github.NewForge(tokenClients(t, srv, nil)) // the bot: octo
	repo := d.Repo("acme/widgets")
	openPull(t, srv, src, "ghp_secret", "redfix/fix-1", "a.go", "fix", "body")

	url, err := d.Comment(ctx, repo, 1, "Closing: fixed on main.")
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Comments("acme", "widgets", 1)
	if len(got) != 1 || got[0].Body != "Closing: fixed on main." || got[0].User != "octo" || !strings.HasSuffix(url, "/pull/1#issuecomment-"+strconv.FormatInt(got[0].ID, 10)) {
		t.Fatalf("comments %+v, url %s", got, url)
	}
	// A person's command is acknowledged with a +1 reaction, once however
	// often.
	c := srv.AddComment("acme", "widgets", 1, "alice", "/redfix explain")
	for range 2 {
		if err := d.Acknowledge(ctx, forge.Comment{Repo: repo, Number: 1, OnChangeRequest: true, ID: c.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Comments("acme", "widgets", 1); len(got) != 2 || strings.Join(got[1].Reactions, ",") != "+1" {
		t.Errorf("reactions: %+v", got)
	}
	if _, err := d.Comment(ctx, repo, 99, "nowhere"); err == nil {
		t.Error("a comment on a pull request that does not exist succeeded")
	}

	if err := d.CloseChangeRequest(ctx, repo, 1); err != nil {
		t.Fatal(err)
	}
	pr, err := d.ChangeRequest(ctx, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	if pr.State != forge.StateClosed {
		t.Errorf("pull request after closing: state %s", pr.State)
	}
	// Closing again is no error.
	if err := d.CloseChangeRequest(ctx, repo, 1); err != nil {
		t.Errorf("close again: %v", err)
	}
}

func TestPermission(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	d := github.NewForge(tokenClients(t, srv, nil))
	repo := d.Repo("acme/widgets")
	for _, u := range []string{"acme", "wanda", "mia", "ada", "tess", "rita", "stranger"} {
		srv.AddUser(u)
	}
	for login, role := range map[string]string{"wanda": "write", "mia": "maintain", "ada": "admin", "tess": "triage", "rita": "read"} {
		srv.SetRole("acme", "widgets", login, role)
	}
	for _, tc := range []struct {
		user, level, role string
		write             bool
	}{
		{"acme", "admin", "admin", true}, // the owner
		{"wanda", "write", "write", true},
		{"mia", "write", "maintain", true}, // GitHub's base level of maintain is write
		{"ada", "admin", "admin", true},
		{"tess", "read", "triage", false},
		{"rita", "read", "read", false},
		{"stranger", "read", "read", false}, // anyone reads a public repository
	} {
		p, err := d.Permission(ctx, repo, tc.user)
		if err != nil {
			t.Errorf("%s: %v", tc.user, err)
			continue
		}
		if p.Level != tc.level || p.Role != tc.role || p.Write != tc.write {
			t.Errorf("%s: %+v, want %s/%s (may write %v)", tc.user, p, tc.level, tc.role, tc.write)
		}
	}
	if _, err := d.Permission(ctx, repo, "ghost"); err == nil {
		t.Error("the permission of a user who does not exist was answered")
	}
}

func TestPermissionCanWrite(t *testing.T) {
	for _, tc := range []struct {
		p    github.Permission
		want bool
	}{
		{github.Permission{Level: "admin"}, true},
		{github.Permission{Level: "write"}, true},
		{github.Permission{Level: "read", Role: "maintain"}, true},
		{github.Permission{Level: "read", Role: "triage"}, false},
		{github.Permission{Level: "none"}, false},
		{github.Permission{}, false},
		{github.Permission{Level: "WRITE"}, true},
	} {
		if got := tc.p.CanWrite(); got != tc.want {
			t.Errorf("%+v.CanWrite() = %v, want %v", tc.p, got, tc.want)
		}
	}
}
