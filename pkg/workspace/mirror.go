package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/repourl"
)

// Mirrors keeps one bare mirror of each remote repository under Dir, updated
// with fetch, and opens each workspace as a work tree of it: a second job on
// the same repository does not clone again. The mirrors' total size is
// bounded: past MaxBytes the least recently used are removed (never one a
// workspace is using). Local paths and file URLs are cloned directly, as
// Open does.
//
// Several processes may share Dir: each mirror is locked (flock) while it is
// cloned, fetched, given a work tree or evicted.
type Mirrors struct {
	Dir      string
	MaxBytes int64 // 0: unbounded
	// Auth, when set, gives the environment that lets git authenticate to
	// a remote (for one command; see gh.Client.GitEnv). It returns nil for
	// remotes it has no credentials for.
	Auth func(ctx context.Context, remote string) ([]string, error)

	mu    sync.Mutex
	inUse map[string]int // mirror dir → open workspaces of this process

	clones, fetches atomic.Int64
}

// MirrorStats counts what the mirrors did.
type MirrorStats struct{ Clones, Fetches int64 }

// Stats are the clones and fetches made so far.
func (m *Mirrors) Stats() MirrorStats {
	return MirrorStats{Clones: m.clones.Load(), Fetches: m.fetches.Load()}
}

// Open checks commit out for a job: a work tree of src's mirror when src is
// remote, a fresh clone otherwise. parent is where the work tree goes (""
// for the system's temporary directory).
func (m *Mirrors) Open(ctx context.Context, src, commit, parent string) (*Workspace, error) {
	if !repourl.IsNetwork(src) {
		return Open(ctx, src, commit, parent)
	}
	dir := filepath.Join(m.Dir, mirrorName(src))
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return nil, fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	mirror, err := m.mirrorLocked(ctx, src, commit, dir)
	var ws *Workspace
	if err == nil {
		m.hold(mirror.Dir, 1)
		ws, err = m.worktreeLocked(ctx, mirror, src, commit, parent)
		if err != nil {
			m.hold(mirror.Dir, -1)
		}
	}
	unlock()
	if err != nil {
		return nil, err
	}
	m.evict(ctx)
	return ws, nil
}

// Mirror is the up-to-date bare mirror of src holding commit ("" for no
// particular commit): cloned the first time, fetched when commit is not in
// it yet.
func (m *Mirrors) Mirror(ctx context.Context, src, commit string) (gitrepo.Repo, error) {
	dir := filepath.Join(m.Dir, mirrorName(src))
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return gitrepo.Repo{}, fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	defer unlock()
	return m.mirrorLocked(ctx, src, commit, dir)
}

// mirrorLocked is Mirror with the mirror's lock held.
func (m *Mirrors) mirrorLocked(ctx context.Context, src, commit, dir string) (gitrepo.Repo, error) {
	repo := gitrepo.Repo{Dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if err := m.clone(ctx, src, dir); err != nil {
			return gitrepo.Repo{}, err
		}
	} else if commit == "" || !hasCommit(ctx, repo, commit) {
		env, err := m.auth(ctx, src)
		if err != nil {
			return gitrepo.Repo{}, err
		}
		m.fetches.Add(1)
		if _, err := repo.GitWith(ctx, env, "fetch", "-q", "--prune", "--tags", "origin"); err != nil {
			return gitrepo.Repo{}, fmt.Errorf("fetch %s into its mirror: %w", redactURL(src), err)
		}
	}
	if commit != "" && !hasCommit(ctx, repo, commit) {
		return gitrepo.Repo{}, fmt.Errorf("mirror of %s: %s: %w", redactURL(src), commit, gitrepo.ErrUnknownRevision)
	}
	touch(dir)
	return repo, nil
}

func (m *Mirrors) auth(ctx context.Context, src string) ([]string, error) {
	if m.Auth == nil {
		return nil, nil
	}
	env, err := m.Auth(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", redactURL(src), err)
	}
	return env, nil
}

// clone makes the bare mirror of src at dir, through a temporary directory
// so that a half-made mirror is never taken for one.
func (m *Mirrors) clone(ctx context.Context, src, dir string) error {
	env, err := m.auth(ctx, src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	tmp, err := os.MkdirTemp(m.Dir, ".clone-")
	if err != nil {
		return fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	defer os.RemoveAll(tmp)
	m.clones.Add(1)
	top := gitrepo.Repo{Dir: m.Dir}
	if _, err := top.GitWith(ctx, env, "clone", "-q", "--bare", "--", src, filepath.Join(tmp, "m")); err != nil {
		return fmt.Errorf("clone %s: %w", redactURL(src), err)
	}
	bare := gitrepo.Repo{Dir: filepath.Join(tmp, "m")}
	// Branches and tags only: no pull-request refs.
	if _, err := bare.Git(ctx, "config", "remote.origin.fetch", "+refs/heads/*:refs/heads/*"); err != nil {
		return fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	if err := os.Rename(bare.Dir, dir); err != nil {
		return fmt.Errorf("mirror of %s: %w", redactURL(src), err)
	}
	return nil
}

func hasCommit(ctx context.Context, r gitrepo.Repo, commit string) bool {
	_, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	return err == nil
}

// worktreeLocked adds a detached work tree of mirror at commit under
// parent, with the mirror's lock held. Its git directory stays in the
// mirror (worktrees/), apart from the work tree.
func (m *Mirrors) worktreeLocked(ctx context.Context, mirror gitrepo.Repo, src, commit, parent string) (*Workspace, error) {
	top, lock, err := newTop(parent)
	if err != nil {
		return nil, fmt.Errorf("workspace for %s: %w", redactURL(src), err)
	}
	sha, err := mirror.Resolve(ctx, commit)
	var wt gitrepo.Repo
	if err == nil {
		wt, err = mirror.AddWorktree(ctx, filepath.Join(top, treeName), sha)
	}
	if err != nil {
		lock.Close()
		os.RemoveAll(top)
		return nil, fmt.Errorf("workspace for %s at %s: %w", redactURL(src), commit, err)
	}
	ws := &Workspace{Dir: wt.Dir, Commit: sha, Repo: wt}
	ws.close = func() error {
		defer m.hold(mirror.Dir, -1)
		defer lock.Close() // after the removal: Sweep must not race it
		ctx := context.Background()
		unlock, lerr := lockFile(ctx, mirror.Dir+".lock")
		err := gitrepo.RemoveWorktree(wt)
		if lerr == nil {
			_, _ = mirror.Git(ctx, "worktree", "prune")
			unlock()
		}
		if rerr := os.RemoveAll(top); err == nil {
			err = rerr
		}
		return err
	}
	ws.sibling = func(ctx context.Context, commit, parent string) (*Workspace, error) {
		unlock, err := lockFile(ctx, mirror.Dir+".lock")
		if err != nil {
			return nil, fmt.Errorf("mirror of %s: %w", redactURL(src), err)
		}
		defer unlock()
		m.hold(mirror.Dir, 1)
		sib, err := m.worktreeLocked(ctx, mirror, src, commit, parent)
		if err != nil {
			m.hold(mirror.Dir, -1)
		}
		return sib, err
	}
	return ws, nil
}

func (m *Mirrors) hold(dir string, delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inUse == nil {
		m.inUse = map[string]int{}
	}
	m.inUse[dir] += delta
	if m.inUse[dir] <= 0 {
		delete(m.inUse, dir)
	}
}

func (m *Mirrors) busy(dir string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inUse[dir] > 0
}

// evict removes the least recently used mirrors while the total is over
// MaxBytes, sparing those with work trees in use.
func (m *Mirrors) evict(ctx context.Context) {
	if m.MaxBytes <= 0 {
		return
	}
	type entry struct {
		dir  string
		size int64
		used time.Time
	}
	entries, err := os.ReadDir(m.Dir)
	if err != nil {
		return
	}
	var all []entry
	var total int64
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(m.Dir, e.Name())
		size := dirSize(dir)
		total += size
		all = append(all, entry{dir: dir, size: size, used: lastUsed(dir)})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	for _, e := range all {
		if total <= m.MaxBytes {
			return
		}
		if m.busy(e.dir) || hasWorktrees(e.dir) {
			continue
		}
		unlock, err := lockFile(ctx, e.dir+".lock")
		if err != nil {
			continue
		}
		if !hasWorktrees(e.dir) && os.RemoveAll(e.dir) == nil {
			total -= e.size
		}
		unlock()
	}
}

// hasWorktrees reports work trees of a mirror (this process's or
// another's) that still exist. A worktree's gitdir file names the .git its
// work tree would hold; redfix keeps that .git away, so the work tree's
// own directory is what is looked for.
func hasWorktrees(dir string) bool {
	entries, err := os.ReadDir(filepath.Join(dir, "worktrees"))
	if err != nil {
		return false
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Dir(strings.TrimSpace(string(data)))); err == nil {
			return true
		}
	}
	return false
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// touch and lastUsed keep the time a mirror was last used in a file of its
// own (a directory's time changes with its contents).
func touch(dir string) {
	_ = os.WriteFile(dir+".used", []byte(time.Now().UTC().Format(time.RFC3339Nano)), 0o644)
}

func lastUsed(dir string) time.Time {
	data, err := os.ReadFile(dir + ".used")
	if err != nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	return t
}

// mirrorName is a directory name for src: readable, and unique through a
// hash of the whole URL.
func mirrorName(src string) string {
	sum := sha256.Sum256([]byte(strings.TrimSuffix(strings.TrimRight(src, "/"), ".git")))
	name := src
	if u, err := url.Parse(src); err == nil && u.Path != "" {
		name = u.Path
	}
	name = strings.TrimSuffix(strings.Trim(name, "/"), ".git")
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, name)
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	return fmt.Sprintf("%s-%x.git", strings.Trim(name, "-."), sum[:6])
}

// redactURL drops any user information from a URL before it is shown.
func redactURL(src string) string {
	u, err := url.Parse(src)
	if err != nil || u.User == nil {
		return src
	}
	u.User = nil
	return u.String()
}

// lockFile takes an exclusive flock on path, waiting until ctx is done.
func lockFile(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
