package publish_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/fakeforge"
	"github.com/redfix/redfix/pkg/forge/gitremote"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// remoteFixture is a repository on a plain git remote (git daemon taking
// pushes): one commit on main with a bug, and two fixes of it as patches.
type remoteFixture struct {
	base, url, head string
	fix, otherFix   string
	forges          *forge.Forges
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.com", "GIT_COMMITTER_NAME=Ann", "GIT_COMMITTER_EMAIL=ann@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRemoteFixture(t *testing.T) *remoteFixture {
	t.Helper()
	src := t.TempDir()
	gitIn(t, src, "init", "-q", "-b", "main")
	const buggy = "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x - y\n}\n"
	if err := os.MkdirAll(filepath.Join(src, "calc"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(src, "calc", "calc.go"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(buggy)
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "commit", "-q", "-m", "calc: Add")
	f := &remoteFixture{base: t.TempDir(), head: gitIn(t, src, "rev-parse", "HEAD")}
	write(strings.Replace(buggy, "x - y", "x + y", 1))
	f.fix = gitIn(t, src, "diff") + "\n"
	write(strings.Replace(buggy, "x - y", "y + x", 1))
	f.otherFix = gitIn(t, src, "diff") + "\n"
	gitIn(t, src, "checkout", "-q", "--", ".")
	gitIn(t, f.base, "clone", "-q", "--bare", src, "calc.git")
	d := testsvc.StartPushableGitDaemon(t, f.base)
	f.url = d.URL("calc.git")
	remotes, err := gitremote.New(gitremote.Remote{Prefix: strings.TrimSuffix(f.url, "calc.git")})
	if err != nil {
		t.Fatal(err)
	}
	f.forges = forge.New(remotes)
	return f
}

func (f *remoteFixture) pr(id, patch string) publish.PullRequest {
	return publish.PullRequest{
		Task: task.Task{ID: id, Fingerprint: "fp-calc-add", Repo: f.url, Commit: f.head, Branch: "main",
			Failures: []task.Failure{{Package: "example.com/calc/calc", Test: "TestAdd", Message: "Add(1, 2) = -1, want 3"}}},
		Patch: patch, Summary: "Add subtracted", Trajectory: []byte("{\"step\":1}\n"), Policy: "offline", Steps: 1,
		Gates: []task.Gate{{Name: "oracle", Verdict: task.GatePass}},
	}
}

// TestPushFixToAPlainRemote: on a plain git remote the fix is pushed to
// the group's branch redfix/… and its description returned for redfix to
// show; the same group delivered again (a second task of it) is a second
// commit on the same branch, never a second branch, and the same fix
// delivered again pushes nothing.
func TestPushFixToAPlainRemote(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newRemoteFixture(t)
	g := publish.NewForge(f.forges, &workspace.Mirrors{Dir: t.TempDir()}, nil, zaptest.NewLogger(t))
	bare := filepath.Join(f.base, "calc.git")
	branch := publish.Branch(f.pr("t1", f.fix).Task)

	first, err := g.Deliver(ctx, f.pr("t1", f.fix))
	if err != nil {
		t.Fatal(err)
	}
	if first.URL != f.url+"#"+branch {
		t.Errorf("address %q, want the clone URL and the branch", first.URL)
	}
	if !strings.HasPrefix(first.Description, "# fix: ") || !strings.Contains(first.Description, publish.Marker("fp-calc-add")) || !strings.Contains(first.Description, "TestAdd") {
		t.Errorf("description:\n%s", first.Description)
	}
	tip1 := gitIn(t, bare, "rev-parse", "refs/heads/"+branch)
	if got := gitIn(t, bare, "show", tip1+":calc/calc.go"); !strings.Contains(got, "x + y") {
		t.Errorf("the branch does not hold the fix:\n%s", got)
	}
	if parent := gitIn(t, bare, "rev-parse", tip1+"^"); parent != f.head {
		t.Errorf("the fix's parent is %s, want the task's commit %s", parent, f.head)
	}
	if traj := gitIn(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/"+publish.TrajectoryRefPrefix); !strings.Contains(traj, "/t1") {
		t.Errorf("no trajectory branch of t1: %q", traj)
	}

	// The group delivered again, by another task with another fix.
	second, err := g.Deliver(ctx, f.pr("t2", f.otherFix))
	if err != nil {
		t.Fatal(err)
	}
	if second.URL != first.URL {
		t.Errorf("second address %q, want the group's %q", second.URL, first.URL)
	}
	tip2 := gitIn(t, bare, "rev-parse", "refs/heads/"+branch)
	if parent := gitIn(t, bare, "rev-parse", tip2+"^"); parent != tip1 {
		t.Errorf("the second delivery's parent is %s, want the first's %s (a second commit on the branch)", parent, tip1)
	}
	if got := gitIn(t, bare, "show", tip2+":calc/calc.go"); !strings.Contains(got, "y + x") {
		t.Errorf("the branch's head is not the second fix:\n%s", got)
	}
	if heads := gitIn(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/redfix/"); heads != "refs/heads/"+branch {
		t.Errorf("redfix's branches for the group: %q, want %s alone", heads, branch)
	}

	// The same fix again (a redelivered job): nothing new is pushed.
	if _, err := g.Deliver(ctx, f.pr("t3", f.otherFix)); err != nil {
		t.Fatal(err)
	}
	if tip3 := gitIn(t, bare, "rev-parse", "refs/heads/"+branch); tip3 != tip2 {
		t.Errorf("the same fix delivered again moved the branch to %s", tip3)
	}
}

// TestWays: each repository's way of delivery is decided from the
// configuration alone, as the publisher will deliver it; a repository
// with none is refused with the reason.
func TestWays(t *testing.T) {
	remotes, err := gitremote.New(gitremote.Remote{Prefix: "git://git.example/team/"})
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeforge.New(t.TempDir())
	src := t.TempDir()
	gitIn(t, src, "init", "-q", "-b", "main")
	gitIn(t, src, "commit", "-q", "--allow-empty", "-m", "empty")
	shop, err := fake.CreateRepo("acme/shop", src)
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(fake, remotes)
	on := publish.Ways{Forges: forges, OnForges: true}
	for repo, want := range map[string]publish.Way{
		"/srv/repos/shop":            publish.WayLocal,
		"git://git.example/team/app": gitremote.Name,
		shop:                         fakeforge.Name,
	} {
		if got, err := on.For(repo); err != nil || got != want {
			t.Errorf("way of %s: %q, %v; want %q", repo, got, err, want)
		}
	}
	for _, tc := range []struct {
		ways publish.Ways
		repo string
		why  string
	}{
		{on, "https://git.example/team/app", "under no configured git remote's prefix"}, // another scheme than the prefix's
		{on, "https://elsewhere.example/x/y", "no configured forge serves"},
		{publish.Ways{Forges: forges}, "git://git.example/team/app", "publish.mode local"},
	} {
		got, err := tc.ways.For(tc.repo)
		if !errors.Is(err, publish.ErrNoDelivery) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("way of %s: %q, %v; want ErrNoDelivery saying %q", tc.repo, got, err, tc.why)
		}
	}
}
