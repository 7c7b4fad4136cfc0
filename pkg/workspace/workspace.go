// Package workspace is a private git checkout of a repository at one commit,
// where the agent reads, edits and runs tests. Every path an action names is
// confined to it.
//
// A workspace is untrusted once anything has run in it. Its git directory
// is kept apart from the work tree (see gitrepo.Repo), its files are read
// and written through pkg/untrusted, and its patch is made of the paths
// that were edited through it (WriteFile, Apply), never of whatever else
// the work tree holds.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Workspace is a checkout at Commit in Dir.
type Workspace struct {
	Dir    string
	Commit string
	Repo   gitrepo.Repo
	owned  bool
	close  func() error // set for work trees of a mirror
	lock   *os.File     // held while the workspace is in use; see Sweep
	// sibling opens another work tree of the same git data at a commit
	// (see Sibling); set for work trees of a mirror, which take its lock.
	sibling func(ctx context.Context, commit, parent string) (*Workspace, error)

	mu     sync.Mutex
	edited map[string]bool // slash paths edited through the workspace
}

// ErrOutside is returned for a path that leaves the workspace.
var ErrOutside = errors.New("path is outside the workspace")

// Layout of a workspace's directory: the work tree, and beside it, out of
// the work tree (and of what the sandbox may write), its git directory.
const (
	treeName = "repo"
	gitName  = "git"
)

// Open clones src into a new directory under parent ("" for the system's
// temporary directory) and checks out commit.
func Open(ctx context.Context, src, commit, parent string) (*Workspace, error) {
	top, lock, err := newTop(parent)
	if err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	repo, err := gitrepo.CloneApart(ctx, src, filepath.Join(top, gitName), filepath.Join(top, treeName))
	var ws *Workspace
	if err == nil {
		ws, err = at(ctx, repo, commit)
	}
	if err != nil {
		_ = lock.Close()
		_ = os.RemoveAll(top)
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	ws.owned = true
	ws.lock = lock
	return ws, nil
}

// newTop makes and locks a workspace's directory under parent.
func newTop(parent string) (string, *os.File, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", nil, err
		}
	}
	top, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", nil, err
	}
	lock, err := hold(top)
	if err != nil {
		_ = os.RemoveAll(top)
		return "", nil, err
	}
	return top, lock, nil
}

// at checks repo's work tree out at commit.
func at(ctx context.Context, repo gitrepo.Repo, commit string) (*Workspace, error) {
	sha, err := repo.Resolve(ctx, commit)
	if err != nil {
		return nil, err
	}
	if err := repo.Checkout(ctx, sha); err != nil {
		return nil, err
	}
	return &Workspace{Dir: repo.Dir, Commit: sha, Repo: repo}, nil
}

// Sibling opens a second, clean workspace at commit ("" for the
// workspace's own) from the same git data, under parent: a base checkout
// to compare with, or a clean place to check a patch. Nothing of this work
// tree reaches it.
func (w *Workspace) Sibling(ctx context.Context, commit, parent string) (*Workspace, error) {
	if commit == "" {
		commit = w.Commit
	}
	if w.sibling != nil {
		return w.sibling(ctx, commit, parent)
	}
	top, lock, err := newTop(parent)
	if err != nil {
		return nil, fmt.Errorf("second workspace at %s: %w", commit, err)
	}
	sha, err := w.Repo.Resolve(ctx, commit)
	var wt gitrepo.Repo
	if err == nil {
		wt, err = w.Repo.AddWorktree(ctx, filepath.Join(top, treeName), sha)
	}
	if err != nil {
		_ = lock.Close()
		_ = os.RemoveAll(top)
		return nil, fmt.Errorf("second workspace at %s: %w", commit, err)
	}
	ws := &Workspace{Dir: wt.Dir, Commit: sha, Repo: wt}
	ws.close = func() error {
		defer lock.Close() // after the removal: Sweep must not race it
		err := gitrepo.RemoveWorktree(wt)
		if rerr := os.RemoveAll(top); err == nil {
			err = rerr
		}
		return err
	}
	return ws, nil
}

// Close removes the workspace's files.
func (w *Workspace) Close() error {
	if w.close != nil {
		c := w.close
		w.close = nil
		return c()
	}
	if !w.owned {
		return nil
	}
	err := os.RemoveAll(filepath.Dir(w.Dir))
	if w.lock != nil {
		_ = w.lock.Close()
	}
	return err
}

// Abs turns a path relative to the workspace (or absolute inside it) into an
// absolute path, refusing any that leaves the workspace, through ".." or
// through a symbolic link.
func (w *Workspace) Abs(path string) (string, error) {
	if path == "" {
		path = "."
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Dir, p)
	}
	p = filepath.Clean(p)
	if !within(w.Dir, p) {
		return "", fmt.Errorf("%s: %w", path, ErrOutside)
	}
	// Follow the links on the way, one component at a time, dangling ones
	// included: each must stay inside and name no .git.
	rel := strings.TrimPrefix(strings.TrimPrefix(p, w.Dir), string(filepath.Separator))
	if untrusted.Trusting {
		// The boundary off (hostile tests only): the path as named is
		// checked, and the links on it are not.
		if hasGitComponent(rel) {
			return "", fmt.Errorf("%s: %w", path, ErrOutside)
		}
		return p, nil
	}
	if err := w.checkLinks(rel); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if hasGitComponent(rel) {
		return "", fmt.Errorf("%s: %w", path, ErrOutside)
	}
	return p, nil
}

// maxLinks bounds the links followed while a path is resolved.
const maxLinks = 40

// checkLinks resolves rel (relative to the work tree) lexically, link by
// link, without asking the file system to follow any: a link that leads
// out of the work tree or to a .git is refused, whether its target exists
// or not.
func (w *Workspace) checkLinks(rel string) error {
	todo := strings.Split(filepath.ToSlash(rel), "/")
	var done []string
	for hops := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return ErrOutside
			}
			done = done[:len(done)-1]
			continue
		}
		if part == ".git" {
			return ErrOutside
		}
		cur := filepath.Join(append([]string{w.Dir}, append(done, part)...)...)
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			done = append(done, part)
			if err != nil {
				// Nothing further exists: the rest is lexical.
				for _, rest := range todo {
					if rest == ".git" {
						return ErrOutside
					}
				}
			}
			continue
		}
		if hops++; hops > maxLinks {
			return fmt.Errorf("too many links: %w", ErrOutside)
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return ErrOutside
		}
		if filepath.IsAbs(target) {
			t, err := filepath.Rel(w.Dir, target)
			if err != nil || t == ".." || strings.HasPrefix(t, ".."+string(filepath.Separator)) {
				return ErrOutside
			}
			done, target = nil, t
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return nil
}

// hasGitComponent reports a path naming .git anywhere: no .git in a work
// tree is redfix's, and none is the agent's to read or write.
func hasGitComponent(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// Rel is the path relative to the workspace root.
func (w *Workspace) Rel(abs string) string {
	r, err := filepath.Rel(w.Dir, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// Diff is the change made through the workspace since Commit: the files
// edited with WriteFile or a patch applied with Apply, as they are now.
// Nothing else the work tree holds (a file a test wrote, a link, a mode
// change) is in it.
func (w *Workspace) Diff(ctx context.Context) (string, error) {
	if untrusted.Trusting {
		return w.Repo.Diff(ctx)
	}
	return w.Repo.DiffPaths(ctx, w.Edited())
}

// Edited lists the paths edited through the workspace, sorted.
func (w *Workspace) Edited() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.edited))
	for p := range w.edited {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (w *Workspace) markEdited(rels ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.edited == nil {
		w.edited = map[string]bool{}
	}
	for _, r := range rels {
		w.edited[path.Clean(filepath.ToSlash(r))] = true
	}
}

// Reset discards every change made since Commit.
func (w *Workspace) Reset(ctx context.Context) error {
	w.mu.Lock()
	w.edited = nil
	w.mu.Unlock()
	return w.Repo.Checkout(ctx, w.Commit)
}

// ReadText reads a text file of the workspace (rel to its root) through
// no link, refusing one over max bytes or binary (see pkg/untrusted).
func (w *Workspace) ReadText(rel string, max int64) (string, error) {
	return untrusted.ReadText(w.Dir, rel, max)
}

// WriteFile writes a file of the workspace (rel to its root) through no
// link, and counts it as edited: it is part of Diff.
func (w *Workspace) WriteFile(rel string, data []byte, perm os.FileMode) error {
	if hasGitComponent(rel) {
		return fmt.Errorf("%s: %w", rel, ErrOutside)
	}
	if err := untrusted.WriteFile(w.Dir, rel, data, perm); err != nil {
		return err
	}
	w.markEdited(rel)
	return nil
}

// Apply applies a unified diff to the work tree with git apply (counts
// recounted from the hunks) and counts its files as edited. The output is
// git's, for saying which hunk did not apply.
func (w *Workspace) Apply(ctx context.Context, patch string) (string, error) {
	files, err := unidiff.Parse(patch)
	if err != nil {
		return "", fmt.Errorf("apply: %w", err)
	}
	f, err := os.CreateTemp("", "redfix-patch-*.diff")
	if err != nil {
		return "", fmt.Errorf("apply: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(patch); err != nil {
		f.Close()
		return "", fmt.Errorf("apply: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("apply: %w", err)
	}
	out, err := w.Repo.Git(ctx, "apply", "--recount", "--whitespace=nowarn", "-v", f.Name())
	if err != nil {
		return out, err
	}
	for _, fl := range files {
		w.markEdited(fl.Paths()...)
	}
	return out, nil
}
