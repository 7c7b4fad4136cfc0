package publish

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// userRepo is a repository a person works in: two commits, HEAD on main,
// and an uncommitted change that publishing must leave alone.
func userRepo(t *testing.T) (gitrepo.Repo, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	put(t, dir, "go.mod", "module example.com/calc\n\ngo 1.22\n")
	put(t, dir, "calc/calc.go", "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x + y\n}\n")
	if _, err := repo.CommitAll(ctx, "calc: add"); err != nil {
		t.Fatal(err)
	}
	put(t, dir, "calc/calc.go", "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x - y\n}\n")
	broken, err := repo.CommitAll(ctx, "calc: add Sub and Neg")
	if err != nil {
		t.Fatal(err)
	}
	put(t, dir, "notes.txt", "work in progress\n")
	return repo, broken
}

func put(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLocalPublish(t *testing.T) {
	ctx := context.Background()
	repo, broken := userRepo(t)
	pr := samplePR()
	pr.Task.Repo = repo.Dir
	pr.Task.Commit = broken
	out := t.TempDir()
	core, logs := observer.New(zap.InfoLevel)
	l := NewLocal(out, zap.New(core))

	headBefore, _ := repo.Resolve(ctx, "HEAD")
	url, err := l.Publish(ctx, pr)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	prDir := filepath.Join(out, "redfix-9f86d081884c")
	if url != "file://"+prDir {
		t.Errorf("url = %q, want file://%s", url, prDir)
	}

	// The branch: one commit on the task's commit, whose diff is the patch.
	branch := "redfix/9f86d081884c"
	parent, err := repo.Resolve(ctx, branch+"^")
	if err != nil || parent != broken {
		t.Fatalf("parent of %s = %s, %v; want %s", branch, parent, err, broken)
	}
	diff, err := repo.Git(ctx, "diff", "--no-color", broken, branch)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(diff) != strings.TrimSpace(samplePatch) && !sameChanges(diff, samplePatch) {
		t.Errorf("branch diff =\n%s\nwant\n%s", diff, samplePatch)
	}
	msg, _ := repo.Git(ctx, "log", "-1", "--format=%B", branch)
	if !strings.HasPrefix(msg, Title(pr)+"\n") || !strings.Contains(msg, "Redfix-Fingerprint: "+pr.Task.Fingerprint) {
		t.Errorf("commit message =\n%s", msg)
	}

	// The user's HEAD, branch and work tree are untouched, no work tree left.
	if head, _ := repo.Resolve(ctx, "HEAD"); head != headBefore {
		t.Errorf("HEAD moved from %s to %s", headBefore, head)
	}
	if b, _ := repo.Git(ctx, "symbolic-ref", "--short", "HEAD"); strings.TrimSpace(b) != "main" {
		t.Errorf("HEAD is on %q, want main", b)
	}
	if st, _ := repo.Git(ctx, "status", "--porcelain"); strings.TrimSpace(st) != "?? notes.txt" {
		t.Errorf("work tree status = %q, want only the user's notes.txt", st)
	}
	if wts, _ := repo.Git(ctx, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("work trees left behind:\n%s", wts)
	}

	// The files.
	md := read(t, prDir, FilePullRequest)
	if want := "# " + Title(pr) + "\n\n" + Body(pr); md != want {
		t.Errorf("pull_request.md =\n%s\nwant\n%s", md, want)
	}
	if got := read(t, prDir, FilePatch); got != samplePatch {
		t.Errorf("patch.diff = %q", got)
	}
	if got := read(t, prDir, FileTrajectory); got != string(pr.Trajectory) {
		t.Errorf("trajectory.jsonl = %q", got)
	}
	var gates []task.Gate
	if err := json.Unmarshal([]byte(read(t, prDir, FileGates)), &gates); err != nil || len(gates) != len(pr.Gates) || gates[2] != pr.Gates[2] {
		t.Errorf("gates.json = %+v, %v", gates, err)
	}

	// Again: nothing is done, the same URL comes back, and the log says so.
	tip, _ := repo.Resolve(ctx, branch)
	pr.Summary = "a second attempt that must not be published"
	again, err := l.Publish(ctx, pr)
	if err != nil || again != url {
		t.Fatalf("second Publish = %q, %v; want %q", again, err, url)
	}
	if now, _ := repo.Resolve(ctx, branch); now != tip {
		t.Errorf("second Publish moved %s from %s to %s", branch, tip, now)
	}
	if strings.Contains(read(t, prDir, FilePullRequest), "second attempt") {
		t.Error("second Publish rewrote pull_request.md")
	}
	if n := logs.FilterMessageSnippet("not publishing again").Len(); n != 1 {
		t.Errorf("%d log lines say the pull request exists, want 1", n)
	}
}

// sameChanges compares the +/- lines of two diffs (index lines differ).
func sameChanges(a, b string) bool {
	pick := func(d string) string {
		var keep []string
		for _, l := range strings.Split(d, "\n") {
			if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return pick(a) == pick(b) && pick(a) != ""
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestLocalPublishRepublishesWhenTheBranchIsGone(t *testing.T) {
	ctx := context.Background()
	repo, broken := userRepo(t)
	pr := samplePR()
	pr.Task.Repo, pr.Task.Commit = repo.Dir, broken
	l := NewLocal(t.TempDir(), nil)
	if _, err := l.Publish(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Git(ctx, "branch", "-D", Branch(pr.Task)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Publish(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Resolve(ctx, Branch(pr.Task)); err != nil {
		t.Errorf("branch not made again: %v", err)
	}
}

func TestLocalPublishErrors(t *testing.T) {
	ctx := context.Background()
	repo, broken := userRepo(t)
	plain := t.TempDir()
	for _, c := range []struct {
		name    string
		change  func(*PullRequest)
		local   bool // the error is ErrNotLocal
		message string
	}{
		{"not a repository", func(pr *PullRequest) { pr.Task.Repo = plain }, true, "not a local git repository"},
		{"a URL", func(pr *PullRequest) { pr.Task.Repo = "https://github.com/x/y" }, true, "is a URL"},
		{"missing", func(pr *PullRequest) { pr.Task.Repo = filepath.Join(plain, "nope") }, true, "not a directory"},
		{"inside a repository", func(pr *PullRequest) { pr.Task.Repo = filepath.Join(repo.Dir, "calc") }, true, "is inside the repository"},
		{"unknown commit", func(pr *PullRequest) { pr.Task.Commit = strings.Repeat("1", 40) }, false, "check out 111111111111"},
		{"patch does not apply", func(pr *PullRequest) { pr.Patch = strings.Replace(samplePatch, "return x - y", "return x * y", 1) }, false, "apply the patch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := samplePR()
			pr.Task.Repo, pr.Task.Commit = repo.Dir, broken
			c.change(&pr)
			out := t.TempDir()
			_, err := NewLocal(out, nil).Publish(ctx, pr)
			if err == nil || !strings.Contains(err.Error(), c.message) || errors.Is(err, ErrNotLocal) != c.local {
				t.Fatalf("Publish = %v; want an error saying %q (ErrNotLocal: %v)", err, c.message, c.local)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("files written for a failed publish: %v", ents)
			}
		})
	}
	if _, err := repo.Resolve(ctx, Branch(samplePR().Task)); err == nil {
		t.Error("a failed publish left a branch")
	}
	if wts, _ := repo.Git(ctx, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("work trees left behind:\n%s", wts)
	}
}
