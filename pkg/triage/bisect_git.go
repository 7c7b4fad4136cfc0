package triage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
	"github.com/redfix/redfix/pkg/workspace"
)

// gitProber runs the tests at commits of a repository, one worktree per
// concurrent probe, and keeps the results in the cache.
type gitProber struct {
	runner Runner
	tests  []string // canonical IDs
	path   []string // position → commit
	slots  chan gitrepo.Repo
	cache  RunCache
	log    *zap.Logger

	mu     sync.Mutex
	cached map[string]map[string]task.CommitRuns // test → commit → runs, from before this bisection
	own    map[string][]Result                   // commit → this bisection's results
}

// load reads the cache once, before any probe of this bisection.
func (g *gitProber) load(ctx context.Context) error {
	g.cached = map[string]map[string]task.CommitRuns{}
	g.own = map[string][]Result{}
	if g.cache == nil {
		return nil
	}
	for _, id := range g.tests {
		runs, err := g.cache.CommitRuns(ctx, id)
		if err != nil {
			return fmt.Errorf("bisect: cached runs of %s: %w", id, err)
		}
		g.cached[id] = runs
	}
	return nil
}

// known is what the cache and this bisection's runs say about each
// position of the path, and how many of those results came from the cache.
func (g *gitProber) known() (known [][]Result, fromCache int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	known = make([][]Result, len(g.path))
	for i, sha := range g.path {
		for _, id := range g.tests {
			c := g.cached[id][sha]
			rs := expand(c)
			fromCache += len(rs)
			known[i] = append(known[i], rs...)
		}
		known[i] = append(known[i], g.own[sha]...)
	}
	return known, fromCache
}

// expand turns counts into results; one skip is enough to say a commit
// does not build.
func expand(c task.CommitRuns) []Result {
	var rs []Result
	for range c.Passed {
		rs = append(rs, ResultPass)
	}
	for range c.Failed {
		rs = append(rs, ResultFail)
	}
	for range c.Missing {
		rs = append(rs, ResultMissing)
	}
	if c.Skipped > 0 {
		rs = append(rs, ResultSkip)
	}
	return rs
}

// Probe runs the tests once at path[i] in a free worktree.
func (g *gitProber) Probe(ctx context.Context, i int) ([]Result, error) {
	sha := g.path[i]
	var repo gitrepo.Repo
	select {
	case repo = <-g.slots:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { g.slots <- repo }()
	if err := repo.Checkout(ctx, sha); err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	rs, err := g.runAt(sandbox.WithTree(ctx, repo.Dir), repo.Dir)
	if err != nil {
		return nil, fmt.Errorf("bisect: run tests at %s: %w", task.Short(sha), err)
	}
	g.mu.Lock()
	g.own[sha] = append(g.own[sha], rs...)
	g.mu.Unlock()
	g.log.Debug("bisect run", zap.String("commit", sha), zap.Stringers("results", rs))
	if g.cache != nil {
		for k, id := range g.tests {
			if err := g.cache.AddCommitRuns(ctx, id, sha, counts(rs[k])); err != nil {
				return nil, fmt.Errorf("bisect: keep run of %s at %s: %w", id, task.Short(sha), err)
			}
		}
	}
	return rs, nil
}

func counts(r Result) task.CommitRuns {
	switch r {
	case ResultPass:
		return task.CommitRuns{Passed: 1}
	case ResultFail:
		return task.CommitRuns{Failed: 1}
	case ResultMissing:
		return task.CommitRuns{Missing: 1}
	}
	return task.CommitRuns{Skipped: 1}
}

// runAt runs each test once in the checkout at dir: one result per test.
// A test whose module, package or function is not there is missing (it
// passes, as `go test -run` would); a package that does not build is a
// skip.
func (g *gitProber) runAt(ctx context.Context, dir string) ([]Result, error) {
	rs := make([]Result, len(g.tests))
	var present []string
	for k, id := range g.tests {
		t, err := testrun.Resolve(dir, id)
		switch {
		case errors.Is(err, testrun.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
			rs[k] = ResultMissing
			continue
		case err != nil:
			rs[k] = ResultSkip
			continue
		}
		if _, err := untrusted.Lstat(dir, t.Dir); errors.Is(err, fs.ErrNotExist) {
			rs[k] = ResultMissing
			continue
		}
		present = append(present, id)
	}
	if len(present) == 0 {
		return rs, nil
	}
	o, err := g.runner.Run(ctx, dir, present, 1)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && notRunnable(err):
		o = testrun.Outcome{Build: []task.Failure{{Message: err.Error()}}}
	case err != nil:
		return nil, err
	}
	for k, id := range g.tests {
		if !slices.Contains(present, id) {
			continue
		}
		c := count(o, id)
		switch {
		case c.failures > 0:
			rs[k] = ResultFail
		case c.runs > 0:
			rs[k] = ResultPass
		case len(o.Build) > 0:
			rs[k] = ResultSkip
		case slices.Contains(o.Missing, id):
			rs[k] = ResultMissing
		default:
			rs[k] = ResultSkip
		}
	}
	return rs, nil
}

// summarize is one result for all tests of a run: any failure fails it;
// then a skip; then missing only when every test is missing.
func summarize(rs []Result) Result {
	out := ResultMissing
	for _, r := range rs {
		switch r {
		case ResultFail:
			return ResultFail
		case ResultSkip:
			out = ResultSkip
		case ResultPass:
			if out == ResultMissing {
				out = ResultPass
			}
		}
	}
	return out
}

// worktrees are the checkouts probes run in: the repository itself, and
// for parallel probes, detached worktrees of it (their git directories kept
// apart, as the repository's) in a scratch directory under the workspaces'
// parent (reclaimed by the workspaces' sweep if this process dies).
type worktrees struct {
	repo    gitrepo.Repo
	scratch *workspace.Scratch
	extra   []gitrepo.Repo
	slots   chan gitrepo.Repo
}

func newWorktrees(ctx context.Context, repo gitrepo.Repo, n int, parent string) (*worktrees, error) {
	w := &worktrees{repo: repo, slots: make(chan gitrepo.Repo, n)}
	w.slots <- repo
	if n <= 1 {
		return w, nil
	}
	scratch, err := workspace.NewScratch(parent)
	if err != nil {
		return nil, fmt.Errorf("worktrees: %w", err)
	}
	w.scratch = scratch
	for k := 1; k < n; k++ {
		wt, err := repo.AddWorktree(ctx, filepath.Join(scratch.Dir, fmt.Sprintf("wt%d", k)), "HEAD")
		if err != nil {
			w.close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("worktree %d: %w", k, err)
		}
		w.extra = append(w.extra, wt)
		w.slots <- wt
	}
	return w, nil
}

// close removes the extra worktrees and their scratch directory.
func (w *worktrees) close(ctx context.Context) {
	for _, wt := range w.extra {
		_ = gitrepo.RemoveWorktree(wt)
	}
	if w.scratch != nil {
		_ = w.scratch.Close()
		_, _ = w.repo.Git(ctx, "worktree", "prune")
	}
}
