package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// Files a local pull request is made of.
const (
	FilePullRequest = "pull_request.md"
	FilePatch       = "patch.diff"
	FileTrajectory  = "trajectory.jsonl"
	FileGates       = "gates.json"
)

// ErrNotLocal is returned for a task whose repository is not a git
// repository on this machine.
var ErrNotLocal = errors.New("not a local git repository")

// Local publishes pull requests into the task's own repository (a branch
// with the patch committed on it) and a directory (the pull request's text
// and attachments). The user's working tree and HEAD are never touched.
type Local struct {
	Dir string // where each pull request gets its directory
	Log *zap.Logger

	mu sync.Mutex // one publish at a time: they share repositories
}

// NewLocal returns a publisher writing under dir.
func NewLocal(dir string, log *zap.Logger) *Local {
	if log == nil {
		log = zap.NewNop()
	}
	return &Local{Dir: dir, Log: log}
}

// Publish creates the branch Branch(pr.Task) at the task's commit with the
// patch committed on it, writes the pull request's files, and returns the
// directory as a file:// URL. A failure group that was published already
// (its pull_request.md and branch exist) is not published again: the
// existing URL is returned.
func (l *Local) Publish(ctx context.Context, pr PullRequest) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := pr.Task
	branch := Branch(t)
	log := l.logger().With(zap.String("task_id", t.ID), zap.String("fingerprint", t.Fingerprint), zap.String("branch", branch))

	repo, err := localRepo(ctx, t.Repo)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	dir, err := filepath.Abs(filepath.Join(l.Dir, strings.ReplaceAll(branch, "/", "-")))
	if err != nil {
		return "", fmt.Errorf("publish task %s: directory: %w", t.ID, err)
	}
	url := "file://" + dir

	done, err := published(ctx, repo, branch, dir, t.Fingerprint)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	if done {
		log.Info("pull request exists for this failure group: not publishing again", zap.String("pull_request", url))
		return url, nil
	}

	title := Title(pr)
	body := Body(pr)
	sha, err := commitPatch(ctx, repo, t.Commit, pr.Patch, commitMessage(title, pr))
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	if err := repo.SetBranch(ctx, branch, sha); err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	if err := writeFiles(dir, title, body, pr); err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	log.Info("pull request published", zap.String("pull_request", url), zap.String("commit", sha))
	return url, nil
}

func (l *Local) logger() *zap.Logger {
	if l.Log == nil {
		return zap.NewNop()
	}
	return l.Log
}

// localRepo checks that path is the top of a git repository here (a work
// tree or a bare repository), not a URL nor a directory inside another
// repository.
func localRepo(ctx context.Context, path string) (gitrepo.Repo, error) {
	if path == "" {
		return gitrepo.Repo{}, fmt.Errorf("the task names no repository: %w", ErrNotLocal)
	}
	if strings.Contains(path, "://") || strings.HasPrefix(path, "git@") {
		return gitrepo.Repo{}, fmt.Errorf("repository %s is a URL; the local publisher needs a path: %w", path, ErrNotLocal)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return gitrepo.Repo{}, fmt.Errorf("repository %s: %w", path, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return gitrepo.Repo{}, fmt.Errorf("repository %s is not a directory: %w", path, ErrNotLocal)
	}
	repo := gitrepo.Repo{Dir: abs}
	gitDir, err := repo.Git(ctx, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return gitrepo.Repo{}, fmt.Errorf("repository %s: %w (%v)", path, ErrNotLocal, err)
	}
	top := filepath.Dir(strings.TrimSpace(gitDir))
	if bare, _ := repo.Git(ctx, "rev-parse", "--is-bare-repository"); strings.TrimSpace(bare) == "true" {
		top = strings.TrimSpace(gitDir)
	} else if out, err := repo.Git(ctx, "rev-parse", "--show-toplevel"); err == nil {
		top = strings.TrimSpace(out)
	}
	if !samePath(top, abs) {
		return gitrepo.Repo{}, fmt.Errorf("repository %s is inside the repository at %s, not one itself: %w", path, top, ErrNotLocal)
	}
	return repo, nil
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// published reports whether this failure group's pull request exists: its
// pull_request.md names the fingerprint and its branch is there.
func published(ctx context.Context, repo gitrepo.Repo, branch, dir, fingerprint string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, FilePullRequest))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read existing pull request: %w", err)
	}
	if !strings.Contains(string(data), Marker(fingerprint)) {
		return false, fmt.Errorf("%s holds the pull request of another failure group (same branch name %s)", dir, branch)
	}
	if _, err := repo.Resolve(ctx, "refs/heads/"+branch); err != nil {
		return false, nil // the branch is gone: publish again
	}
	return true, nil
}

// commitPatch commits patch on top of base in a temporary work tree of repo
// and returns the commit. Hooks do not run: the repository's own could do
// anything.
func commitPatch(ctx context.Context, repo gitrepo.Repo, base, patch, message string) (string, error) {
	if strings.TrimSpace(patch) == "" {
		return "", errors.New("commit patch: the patch is empty")
	}
	tmp, err := os.MkdirTemp("", "redfix-publish-")
	if err != nil {
		return "", fmt.Errorf("commit patch: %w", err)
	}
	defer os.RemoveAll(tmp)
	patchFile := filepath.Join(tmp, "patch.diff")
	if err := os.WriteFile(patchFile, []byte(patch), 0o644); err != nil {
		return "", fmt.Errorf("commit patch: %w", err)
	}
	wtDir := filepath.Join(tmp, "tree")
	if err := gitrepo.CheckRevision(base); err != nil {
		return "", fmt.Errorf("commit patch: %w", err)
	}
	if _, err := repo.Git(ctx, "worktree", "add", "-q", "--detach", wtDir, base+"^{commit}"); err != nil {
		return "", fmt.Errorf("check out %s for the patch: %w", task.Short(base), err)
	}
	defer func() {
		// Cleaned up even if ctx is done: a stale work tree blocks its branch.
		cleanup := context.WithoutCancel(ctx)
		_, _ = repo.Git(cleanup, "worktree", "remove", "--force", wtDir)
		_, _ = repo.Git(cleanup, "worktree", "prune")
	}()
	wt := gitrepo.Repo{Dir: wtDir}
	if _, err := wt.Git(ctx, "apply", "--index", "--whitespace=nowarn", patchFile); err != nil {
		return "", fmt.Errorf("apply the patch on %s: %w", task.Short(base), err)
	}
	if _, err := wt.Git(ctx, "commit", "-q", "--no-verify", "-m", message); err != nil {
		return "", fmt.Errorf("commit the patch on %s: %w", task.Short(base), err)
	}
	sha, err := wt.Resolve(ctx, "HEAD")
	if err != nil {
		return "", fmt.Errorf("commit the patch on %s: %w", task.Short(base), err)
	}
	return sha, nil
}

// commitMessage is the title, the agent's summary and trailers naming the
// task. Forges read commit messages too: the summary's mentions and issue
// references are broken (a "Fixes #12" from the model would close the
// issue when the commit lands).
func commitMessage(title string, pr PullRequest) string {
	var b strings.Builder
	b.WriteString(title + "\n")
	if s := strings.TrimSpace(pr.Summary); s != "" {
		b.WriteString("\n" + markdown.NoRefs(s) + "\n")
	}
	fmt.Fprintf(&b, "\nRedfix-Task: %s\nRedfix-Fingerprint: %s\n", pr.Task.ID, pr.Task.Fingerprint)
	if blame := pr.Task.Bisection.Blame; blame != "" {
		fmt.Fprintf(&b, "Redfix-Blame: %s\n", blame)
	}
	return b.String()
}

// writeFiles writes the attachments, then pull_request.md last: its presence
// means the pull request is complete.
func writeFiles(dir, title, body string, pr PullRequest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pull request: %w", err)
	}
	gates := pr.Gates
	if gates == nil {
		gates = []task.Gate{}
	}
	gj, err := json.MarshalIndent(gates, "", "  ")
	if err != nil {
		return fmt.Errorf("write pull request: gates: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{
		{FilePatch, []byte(pr.Patch)},
		{FileTrajectory, pr.Trajectory},
		{FileGates, append(gj, '\n')},
		{FilePullRequest, []byte("# " + inline(title) + "\n\n" + body)},
	}
	for _, f := range files {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("write pull request: %w", err)
		}
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
