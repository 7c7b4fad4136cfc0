// Package workspace is a private git checkout of a repository at one commit,
// where the agent reads, edits and runs tests. Every path an action names is
// confined to it.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// Workspace is a checkout at Commit in Dir.
type Workspace struct {
	Dir    string
	Commit string
	Repo   gitrepo.Repo
	owned  bool
	close  func() error // set for work trees of a mirror
	lock   *os.File     // held while the workspace is in use; see Sweep
}

// ErrOutside is returned for a path that leaves the workspace.
var ErrOutside = errors.New("path is outside the workspace")

// Open clones src into a new directory under parent ("" for the system's
// temporary directory) and checks out commit.
func Open(ctx context.Context, src, commit, parent string) (*Workspace, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("workspace for %s: %w", src, err)
		}
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	lock, err := hold(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	ws, err := openIn(ctx, src, commit, filepath.Join(dir, "repo"))
	if err != nil {
		_ = lock.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	ws.owned = true
	ws.lock = lock
	return ws, nil
}

func openIn(ctx context.Context, src, commit, dir string) (*Workspace, error) {
	repo, err := gitrepo.Clone(ctx, src, dir)
	if err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	sha, err := repo.Resolve(ctx, commit)
	if err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	if err := repo.Checkout(ctx, sha); err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", src, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Workspace{Dir: abs, Commit: sha, Repo: gitrepo.Repo{Dir: abs}}, nil
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
	// Resolve links on the longest existing prefix.
	real := p
	for probe := p; ; probe = filepath.Dir(probe) {
		if r, err := filepath.EvalSymlinks(probe); err == nil {
			real = filepath.Join(r, strings.TrimPrefix(p, probe))
			break
		}
		if probe == w.Dir || probe == filepath.Dir(probe) {
			break
		}
	}
	root, err := filepath.EvalSymlinks(w.Dir)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	if !within(root, real) {
		return "", fmt.Errorf("%s: %w", path, ErrOutside)
	}
	if filepath.Base(p) == ".git" || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: %w", path, ErrOutside)
	}
	return p, nil
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

// Diff is the change made in the workspace since Commit.
func (w *Workspace) Diff(ctx context.Context) (string, error) { return w.Repo.Diff(ctx) }

// Reset discards every change made since Commit.
func (w *Workspace) Reset(ctx context.Context) error { return w.Repo.Checkout(ctx, w.Commit) }
