package gitrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// CloneApart clones src (a path or URL) into a work tree at workTree whose
// git directory is gitDir, outside it, and checks nothing out. The work
// tree holds no .git: redfix's git finds the git directory through the
// Repo it returns, sealed.
func CloneApart(ctx context.Context, src, gitDir, workTree string) (Repo, error) {
	top := Repo{Dir: "."}
	if _, err := top.Git(ctx, "clone", "-q", "--no-checkout", "--separate-git-dir="+gitDir, "--", src, workTree); err != nil {
		return Repo{}, fmt.Errorf("clone %s: %w", src, err)
	}
	return apart(workTree, gitDir)
}

// apart takes the work tree's .git file away (its git directory is known
// to redfix, and to nothing that runs in the work tree) and seals the
// repository.
func apart(workTree, gitDir string) (Repo, error) {
	if untrusted.Trusting {
		abs, err := filepath.Abs(workTree)
		return Repo{Dir: abs}, err
	}
	if err := os.Remove(filepath.Join(workTree, ".git")); err != nil {
		return Repo{}, fmt.Errorf("keep the git directory of %s apart: %w", workTree, err)
	}
	abs, err := filepath.Abs(workTree)
	if err != nil {
		return Repo{}, err
	}
	gabs, err := filepath.Abs(gitDir)
	if err != nil {
		return Repo{}, err
	}
	return Repo{Dir: abs, GitDir: gabs}.Seal()
}

// AddWorktree adds a work tree of the repository at dir, detached at rev,
// whose git directory (under the repository's worktrees/) is kept apart
// from it like CloneApart's. It is locked, so that a prune by another
// process never takes it while it lives; RemoveWorktree removes it.
func (r Repo) AddWorktree(ctx context.Context, dir, rev string) (Repo, error) {
	if err := CheckRevision(rev); err != nil {
		return Repo{}, fmt.Errorf("add worktree: %w", err)
	}
	if strings.HasPrefix(dir, "-") {
		return Repo{}, fmt.Errorf("add worktree %q: a path starting with '-'", dir)
	}
	if _, err := r.Git(ctx, "worktree", "add", "-q", "--detach", "--lock", dir, rev); err != nil {
		return Repo{}, fmt.Errorf("add worktree at %s: %w", rev, err)
	}
	// The .git file git just wrote names the worktree's git directory:
	// nothing has run in the new work tree yet.
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return Repo{}, fmt.Errorf("add worktree at %s: %w", rev, err)
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return Repo{}, fmt.Errorf("add worktree at %s: unexpected .git file %q", rev, data)
	}
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	return apart(dir, gitDir)
}

// RemoveWorktree removes a work tree AddWorktree made, and its git
// directory.
func RemoveWorktree(wt Repo) error {
	err := os.RemoveAll(wt.Dir)
	// Only a worktree's own git directory is removed, never a repository.
	if wt.GitDir != "" && filepath.Base(filepath.Dir(wt.GitDir)) == "worktrees" {
		if rerr := os.RemoveAll(wt.GitDir); err == nil {
			err = rerr
		}
	}
	return err
}

// Seal records the git directory's configuration as it is now: a later
// command on the repository fails with ErrTampered if it changed.
func (r Repo) Seal() (Repo, error) {
	r.seal = ""
	if err := r.Verify(); err != nil {
		return Repo{}, err
	}
	d, err := configDigest(r.GitDir)
	if err != nil {
		return Repo{}, fmt.Errorf("seal %s: %w", r.GitDir, err)
	}
	r.seal = d
	return r, nil
}

// Verify checks that the git metadata of a work tree whose git directory is
// kept apart is what redfix left: the git directory is a directory (not a
// link), not inside the work tree, and its configuration is the one sealed.
// A repository without GitDir has nothing to check.
func (r Repo) Verify() error {
	if r.GitDir == "" {
		return nil
	}
	fi, err := os.Lstat(r.GitDir)
	if err != nil {
		return fmt.Errorf("%w: git directory %s: %v", ErrTampered, r.GitDir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: git directory %s is not a directory (%v)", ErrTampered, r.GitDir, fi.Mode().Type())
	}
	wt, err1 := filepath.EvalSymlinks(r.Dir)
	gd, err2 := filepath.EvalSymlinks(r.GitDir)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%w: %v", ErrTampered, err)
	}
	if gd == wt || strings.HasPrefix(gd, wt+string(filepath.Separator)) {
		return fmt.Errorf("%w: git directory %s is inside the work tree %s", ErrTampered, gd, wt)
	}
	if r.seal == "" {
		return nil
	}
	d, err := configDigest(r.GitDir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTampered, err)
	}
	if d != r.seal {
		return fmt.Errorf("%w: the configuration of %s changed", ErrTampered, r.GitDir)
	}
	return nil
}

// configDigest hashes what decides how git behaves in a git directory: its
// config files and those of the common directory a worktree's points to.
func configDigest(gitDir string) (string, error) {
	h := sha256.New()
	add := func(p string) error {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(h, "%s\x00absent\x00", p)
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			fmt.Fprintf(h, "%s\x00%v\x00", p, fi.Mode().Type())
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00%d\x00", p, fi.Size())
		_, err = io.Copy(h, io.LimitReader(f, 1<<20))
		return err
	}
	dirs := []string{gitDir}
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	for _, d := range dirs {
		for _, f := range []string{"config", "config.worktree", "commondir"} {
			if err := add(filepath.Join(d, f)); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNotInPatch is returned by DiffPaths for a path that is not a regular
// file in the work tree (a link, a directory, a FIFO): a patch is made of
// files only.
var ErrNotInPatch = errors.New("cannot be part of a patch")

// DiffPaths is the change of the named paths (relative to the work tree,
// slash-separated) against HEAD: files changed, created or deleted. Only
// those paths are in it, whatever else the work tree holds now; a path that
// is not a regular file is refused with ErrNotInPatch. Mode changes are not
// part of it.
func (r Repo) DiffPaths(ctx context.Context, paths []string) (string, error) {
	var present []string
	clean := make([]string, 0, len(paths))
	for _, p := range paths {
		c := path.Clean(filepath.ToSlash(p))
		if c == "." || c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) || c == ".git" || strings.HasPrefix(c, ".git/") || strings.Contains(c, "/.git/") || strings.HasSuffix(c, "/.git") {
			return "", fmt.Errorf("diff %s: %w", p, ErrNotInPatch)
		}
		fi, err := untrusted.Lstat(r.Dir, c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", fmt.Errorf("diff %s: %w: %v", c, ErrNotInPatch, err)
		case !fi.Mode().IsRegular():
			return "", fmt.Errorf("diff %s: %w: it is %v now", c, ErrNotInPatch, fi.Mode().Type())
		default:
			present = append(present, c)
		}
		clean = append(clean, c)
	}
	if len(clean) == 0 {
		return "", nil
	}
	if len(present) > 0 {
		// A new file shows in the diff once intended for the index
		// (ignored or not: the agent made it).
		args := append([]string{"--literal-pathspecs", "add", "-N", "-f", "--"}, present...)
		if _, err := r.Git(ctx, args...); err != nil {
			return "", fmt.Errorf("diff: %w", err)
		}
	}
	args := append([]string{"--literal-pathspecs", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "HEAD", "--"}, clean...)
	out, err := r.Git(ctx, args...)
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return out, nil
}
