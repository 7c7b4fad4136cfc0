package gitremote_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/forgetest"
	"github.com/redfix/redfix/pkg/forge/gitremote"
)

// TestConformance: a plain git remote behind git http-backend that asks a
// password passes the suite every forge driver passes, where it has the
// capability (identity, credentials given to one git command); it lacks
// the rest (change requests on a page, reviews, commands, checks), and
// the suite says so.
func TestConformance(t *testing.T) {
	base := t.TempDir()
	srv := testsvc.StartGitHTTP(t, base, "redfix-bot", "s3cret-token-value")
	f, err := gitremote.New(gitremote.Remote{Prefix: srv.URL("team") + "/", Username: "redfix-bot", Password: "s3cret-token-value"})
	if err != nil {
		t.Fatal(err)
	}
	forgetest.Run(t, &backend{f: f, base: base, srv: srv})
	if srv.Denied() == 0 {
		t.Error("the server refused nothing: the push without credentials was not tried")
	}
}

// backend is a directory of bare repositories behind git http-backend.
type backend struct {
	f    *gitremote.Forge
	base string
	srv  *testsvc.GitHTTP
}

func (b *backend) Driver() forge.Driver { return b.f }

func (b *backend) CreateRepo(t testing.TB, name, dir string) string {
	bare := filepath.Join(b.base, "team", name)
	if out, err := exec.Command("git", "clone", "-q", "--bare", dir, bare).CombinedOutput(); err != nil {
		t.Fatalf("bare clone: %v\n%s", err, out)
	}
	return b.srv.URL("team/" + name)
}

func (b *backend) AddUser(t testing.TB, _ forge.RepoID, _, _ string, _ bool) {
	t.Fatal("a plain git remote has no people")
}

func (b *backend) Comment(t testing.TB, _ forge.RepoID, _ int, _, _ string) forge.Comment {
	t.Fatal("a plain git remote has no comments")
	return forge.Comment{}
}

func (b *backend) Comments(t testing.TB, _ forge.RepoID, _ int) []string {
	t.Fatal("a plain git remote has no comments")
	return nil
}

func (b *backend) Acknowledged(t testing.TB, _ forge.Comment) bool {
	t.Fatal("a plain git remote has no comments")
	return false
}

func (b *backend) Labels(t testing.TB, _ forge.RepoID, _ int) []string {
	t.Fatal("a plain git remote has no labels")
	return nil
}

func (b *backend) Reviewers(t testing.TB, _ forge.RepoID, _ int) []string {
	t.Fatal("a plain git remote has no reviews")
	return nil
}

// TestCheckRefuses: a remote that cannot be served as configured is
// refused with the reason, before anything reaches it.
func TestCheckRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		r    gitremote.Remote
		want string
	}{
		"no prefix":              {gitremote.Remote{}, "not a URL"},
		"not a directory":        {gitremote.Remote{Prefix: "https://git.example/team"}, `end with "/"`},
		"ssh":                    {gitremote.Remote{Prefix: "ssh://git@git.example/team/"}, "scheme ssh"},
		"password in the prefix": {gitremote.Remote{Prefix: "https://bot:pw@git.example/team/"}, "credentials"},
		"username alone":         {gitremote.Remote{Prefix: "https://git.example/team/", Username: "bot"}, "go together"},
		"password alone":         {gitremote.Remote{Prefix: "https://git.example/team/", Password: "pw"}, "go together"},
		"credentials on git://":  {gitremote.Remote{Prefix: "git://git.example/team/", Username: "bot", Password: "pw"}, "git:// carries no credentials"},
		"credentials in clear":   {gitremote.Remote{Prefix: "http://git.example/team/", Username: "bot", Password: "pw"}, "in clear"},
		"colon in the username":  {gitremote.Remote{Prefix: "https://git.example/team/", Username: "b:ot", Password: "pw"}, "colon"},
	} {
		if _, err := gitremote.Check(tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check(%+v) = %v, want an error saying %q", name, tc.r, err, tc.want)
		}
	}
	if _, err := gitremote.New(gitremote.Remote{Prefix: "https://git.example/team/"}, gitremote.Remote{Prefix: "ftp://x/"}); err == nil || !strings.Contains(err.Error(), "remote 2") {
		t.Errorf("New with a bad second remote: %v, want it named", err)
	}
}

// TestServesWhatItsPrefixesHold: a repository is the remote's when its URL
// is under a prefix, scheme included for delivery; credentials go to that
// prefix's URLs alone, and a remote without credentials gives git none.
func TestServesWhatItsPrefixesHold(t *testing.T) {
	ctx := context.Background()
	f, err := gitremote.New(
		gitremote.Remote{Prefix: "https://Git.Example/team/", Username: "bot", Password: "tok-123456789"},
		gitremote.Remote{Prefix: "git://127.0.0.1:9419/"},
	)
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(f)
	for repoURL, served := range map[string]bool{
		"https://git.example/team/app.git":   true,
		"https://git.example/team/sub/app":   true,
		"git://127.0.0.1:9419/x.git":         true,
		"https://git.example/teamster/app":   false,
		"https://other.example/team/app":     false,
		"git://127.0.0.1:9418/x":             false,
		"http://git.example/team/app":        false, // the scheme is not the prefix's
		"ssh://git@git.example/team/app.git": false,
	} {
		err := f.Delivers(repoURL)
		if (err == nil) != served {
			t.Errorf("Delivers(%s) = %v, want served %v", repoURL, err, served)
		}
		env, _ := f.GitEnv(ctx, repoURL)
		if hasAuth := strings.Contains(strings.Join(env, "\n"), "Authorization"); hasAuth != (served && strings.HasPrefix(repoURL, "https://")) {
			t.Errorf("GitEnv(%s) = %v", repoURL, env)
		}
	}
	if d, _, err := forges.ForURL("https://git.example/team/app"); err != nil || d.Name() != gitremote.Name {
		t.Errorf("the registry chose %v, %v", d, err)
	}
	if _, _, err := forges.ForURL("https://other.example/team/app"); !errors.Is(err, forge.ErrNotServed) {
		t.Errorf("a repository under no prefix: %v, want ErrNotServed", err)
	}
	cred, err := f.PushCredentials(ctx, "https://git.example/team/app")
	if err != nil || len(cred.Env) == 0 || !strings.Contains(strings.Join(cred.Secrets, " "), "tok-123456789") {
		t.Errorf("push credentials %+v, %v: want the token, hidden wherever it appears", cred, err)
	}
	if cred, err := f.PushCredentials(ctx, "git://127.0.0.1:9419/x"); err != nil || len(cred.Env) != 0 {
		t.Errorf("push credentials of a remote that asks none: %+v, %v", cred, err)
	}
	if _, _, ok := f.ChangeOf(f.BranchURL("https://git.example/team/app", "redfix/abc")); ok {
		t.Error("a pushed branch read as a change request whose outcome is followed")
	}
}
