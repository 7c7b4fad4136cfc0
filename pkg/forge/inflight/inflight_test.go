package inflight_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/forge/inflight"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// widgets is acme/widgets on a test GitHub, with the bot's token
// (ghp_secret, octo) and a person's (ghp_alice, alice).
type widgets struct {
	srv *ghtest.Server
	src string
}

func newWidgets(t *testing.T) *widgets {
	t.Helper()
	src := t.TempDir()
	git(t, src, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, src, "add", "-A")
	git(t, src, "commit", "-q", "-m", "first")
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", src)
	srv.AddToken("ghp_secret", "octo")
	srv.AddToken("ghp_alice", "alice")
	return &widgets{srv: srv, src: src}
}

// forges is the test GitHub as the one forge, as token's user.
func (w *widgets) forges(t *testing.T, token string) (*forge.Forges, *github.Forge) {
	t.Helper()
	c, err := github.New(github.Config{APIURL: w.srv.APIURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	d := github.NewForge(c)
	return forge.New(d), d
}

// open pushes branch (one commit changing file) and opens a pull request
// from it as token's user.
func (w *widgets) open(t *testing.T, token, branch, file, title, body string) {
	t.Helper()
	git(t, w.src, "checkout", "-q", "-b", branch, "main")
	if err := os.MkdirAll(filepath.Dir(filepath.Join(w.src, file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.src, file), []byte(branch+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, w.src, "add", "-A")
	git(t, w.src, "commit", "-q", "-m", branch)
	git(t, w.src, "checkout", "-q", "main")
	if out, err := w.srv.Git("acme", "widgets", "fetch", "-q", w.src, branch+":"+branch); err != nil {
		t.Fatalf("push %s: %v: %s", branch, err, out)
	}
	_, d := w.forges(t, token)
	if _, err := d.OpenChangeRequest(context.Background(), d.Repo("acme/widgets"), forge.NewChangeRequest{Title: title, Body: body, Head: branch, Base: "main"}); err != nil {
		t.Fatal(err)
	}
}

func TestHumanFixes(t *testing.T) {
	ctx := context.Background()
	w := newWidgets(t)
	bot, _ := w.forges(t, "ghp_secret")
	repo := w.srv.HTMLURL("acme", "widgets")
	h := inflight.HumanFixes{Forges: bot}

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
	w.open(t, "ghp_secret", "redfix/fix-add", "calc/calc.go", "Fix TestAdd", "")
	if url, _ := find([]string{"calc/calc.go"}, []string{"TestAdd"}); url != "" {
		t.Fatalf("the bot's own pull request counted: %s", url)
	}
	// A person's pull request that changes the failing file.
	w.open(t, "ghp_alice", "alice/add", "calc/calc.go", "Make addition faster", "no tests named here")
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
	w.open(t, "ghp_alice", "alice/revert", "docs/x.md", "Revert 1a2b3c4", "It broke the build.")
	if url, why := find(nil, []string{"TestSub", "1a2b3c4"}); !strings.HasSuffix(url, "/pull/3") || why != "by alice, it mentions 1a2b3c4" {
		t.Errorf("found %q (%s), want pull 3 naming the commit", url, why)
	}
	if n := len(w.srv.CallsTo(http.MethodGet, "/repos/{owner}/{repo}/pulls/{pull_number}/files")); n == 0 {
		t.Errorf("the files of no pull request were read")
	}

	// A repository on no configured forge, or no forge at all: not checked.
	for _, h := range []inflight.HumanFixes{{Forges: bot}, {}, {Forges: forge.New()}} {
		if _, _, checked, err := h.OpenHumanFix(ctx, "https://gitlab.example/acme/widgets", []string{"a.go"}, nil); checked || err != nil {
			t.Errorf("another host: checked %v, err %v", checked, err)
		}
	}
}

// TestOwnCountsRedfixsOpenChangeRequests: redfix's own are those from its
// branches, whoever opened them; a repository on no forge has none.
func TestOwnCountsRedfixsOpenChangeRequests(t *testing.T) {
	ctx := context.Background()
	w := newWidgets(t)
	bot, d := w.forges(t, "ghp_secret")
	own := inflight.Own{Forges: bot}
	repo := w.srv.CloneURL("acme", "widgets")
	w.open(t, "ghp_secret", "redfix/one", "a.go", "one", "")
	w.open(t, "ghp_secret", "redfix/two", "b.go", "two", "")
	w.open(t, "ghp_alice", "alice/three", "c.go", "three", "")
	if n, err := own.OpenPullRequests(ctx, repo); err != nil || n != 2 {
		t.Errorf("redfix's open pull requests: %d, %v; want 2", n, err)
	}
	if err := d.CloseChangeRequest(ctx, d.Repo("acme/widgets"), 1); err != nil {
		t.Fatal(err)
	}
	if n, err := own.OpenPullRequests(ctx, repo); err != nil || n != 1 {
		t.Errorf("after closing one: %d, %v; want 1", n, err)
	}
	if n, err := (inflight.Own{}).OpenPullRequests(ctx, repo); err != nil || n != 0 {
		t.Errorf("no forges: %d, %v", n, err)
	}
}
