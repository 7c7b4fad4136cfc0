package gh_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/ghtest"
)

// openPull pushes branch (one commit changing file) to acme/widgets and
// opens a pull request from it as the token's user.
func openPull(t *testing.T, srv *ghtest.Server, src, token, branch, file, title, body string) {
	t.Helper()
	run(t, src, nil, "git", "checkout", "-q", "-b", branch, "main")
	if err := os.MkdirAll(filepath.Dir(filepath.Join(src, file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, file), []byte(branch+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, src, nil, "git", "add", "-A")
	run(t, src, nil, "git", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", branch)
	run(t, src, nil, "git", "checkout", "-q", "main")
	if out, err := srv.Git("acme", "widgets", "fetch", "-q", src, branch+":"+branch); err != nil {
		t.Fatalf("push %s: %v: %s", branch, err, out)
	}
	c, err := gh.New(gh.Config{APIURL: srv.APIURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.ForRepo(context.Background(), "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.PullRequests.Create(context.Background(), "acme", "widgets", &github.NewPullRequest{
		Title: github.String(title), Body: github.String(body), Head: github.String(branch), Base: github.String("main"),
	}); err != nil {
		t.Fatal(err)
	}
}

func TestHumanFixes(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	clients := tokenClients(t, srv, nil) // the bot: octo
	srv.AddToken("ghp_alice", "alice")
	repo := srv.HTMLURL("acme", "widgets")
	h := gh.HumanFixes{Clients: clients}

	find := func(files, terms []string) (string, string) {
		t.Helper()
		url, why, checked, err := h.OpenHumanFix(ctx, repo, files, terms)
		if err != nil || !checked {
			t.Fatalf("OpenHumanFix: checked %v, err %v", checked, err)
		}
		return url, why
	}
	if url, _ := find([]string{"calc/calc.go"}, []string{"TestAdd"}); url != "" {
		t.Fatalf("no pull request open, found %s", url)
	}
	// The bot's own pull request does not count, whatever it touches.
	openPull(t, srv, src, "ghp_secret", "redfix/fix-add", "calc/calc.go", "Fix TestAdd", "")
	if url, _ := find([]string{"calc/calc.go"}, []string{"TestAdd"}); url != "" {
		t.Fatalf("the bot's own pull request counted: %s", url)
	}
	// A person's pull request that changes the failing file.
	openPull(t, srv, src, "ghp_alice", "alice/add", "calc/calc.go", "Make addition faster", "no tests named here")
	url, why := find([]string{"/home/ci/work/calc/calc.go"}, []string{"TestAdd"})
	if !strings.HasSuffix(url, "/acme/widgets/pull/2") || why != "by alice, it changes calc/calc.go" {
		t.Errorf("found %q (%s), want pull 2 changing calc/calc.go", url, why)
	}
	// Files it does not touch and terms it does not name (as whole words):
	// none.
	if url, _ := find([]string{"other/x.go"}, []string{"TestSub", "fast"}); url != "" {
		t.Errorf("unrelated failure matched %s", url)
	}
	// A person's pull request that names the blame commit.
	openPull(t, srv, src, "ghp_alice", "alice/revert", "docs/x.md", "Revert 1a2b3c4", "It broke the build.")
	if url, why := find(nil, []string{"TestSub", "1a2b3c4"}); !strings.HasSuffix(url, "/pull/3") || why != "by alice, it mentions 1a2b3c4" {
		t.Errorf("found %q (%s), want pull 3 naming the commit", url, why)
	}
	if n := len(srv.CallsTo(http.MethodGet, "/repos/{owner}/{repo}/pulls/{pull_number}/files")); n == 0 {
		t.Errorf("the files of no pull request were read")
	}

	// Not GitHub's repository, or no GitHub: not checked.
	for _, h := range []gh.HumanFixes{{Clients: clients}, {}} {
		if _, _, checked, err := h.OpenHumanFix(ctx, "https://gitlab.example/acme/widgets", []string{"a.go"}, nil); checked || err != nil {
			t.Errorf("another host: checked %v, err %v", checked, err)
		}
	}
}
