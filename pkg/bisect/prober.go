package bisect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// gitProber runs the tests at commits of a repository, one worktree per
// concurrent probe, and keeps the results in the cache.
type gitProber struct {
	runner Runner
	lang   Language
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
			if err := g.cache.AddCommitRuns(ctx, id, sha, rs[k].CommitRuns()); err != nil {
				return nil, fmt.Errorf("bisect: keep run of %s at %s: %w", id, task.Short(sha), err)
			}
		}
	}
	return rs, nil
}

// declared reports whether the checkout of sha declares one of the tests
// at least, as the language tells (see TestDeclarer), in a free worktree.
func (g *gitProber) declared(ctx context.Context, sha string) (bool, error) {
	var repo gitrepo.Repo
	select {
	case repo = <-g.slots:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { g.slots <- repo }()
	if err := repo.Checkout(ctx, sha); err != nil {
		return false, fmt.Errorf("bisect: %w", err)
	}
	for _, id := range g.tests {
		if declares(g.lang, repo.Dir, id) {
			return true, nil
		}
	}
	return false, nil
}

// runAt runs each test once in the checkout at dir: one result per test.
// A test whose module, package or file is not there is missing (it passes,
// as a runner asked for a test that is not there would); a package that
// does not build is a skip, and so is every test at a commit whose
// dependencies cannot be set up (the language's Setup fails there).
func (g *gitProber) runAt(ctx context.Context, dir string) ([]Result, error) {
	rs := make([]Result, len(g.tests))
	if err := g.lang.Setup(ctx, dir); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		g.log.Info("bisect: setup failed, the commit cannot be tested", zap.Error(err))
		for k := range rs {
			rs[k] = ResultSkip
		}
		return rs, nil
	}
	var present []string
	for k, id := range g.tests {
		t, err := g.lang.Resolve(dir, id)
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
		rs[k] = resultIn(o, id)
	}
	return rs, nil
}

// resultIn is what the one run in o did of the test id: a failure when it
// failed or the run timed out (a hang is a failure), a pass when it
// passed; a skip when the package did not build; missing when the test is
// not there.
func resultIn(o testrun.Outcome, id string) Result {
	runs := o.Runs[id]
	switch {
	case runs.Fail > 0 || o.TimedOut:
		return ResultFail
	case runs.Pass > 0:
		return ResultPass
	case len(o.Build) > 0:
		return ResultSkip
	case slices.Contains(o.Missing, id):
		return ResultMissing
	}
	return ResultSkip
}

// notRunnable reports an error of the runner that means the tests cannot
// run at this commit (the driver finds no module or package to run them
// in), not that the runner is broken.
func notRunnable(err error) bool {
	return errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) || errors.Is(err, fs.ErrNotExist)
}
