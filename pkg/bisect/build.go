package bisect

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Builder compiles packages and their tests without running any test (a
// language driver does).
type Builder interface {
	Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
}

// BuildBisector finds the commit that broke a package's build. A build is
// deterministic, so it is a plain binary search over bad's first-parent
// history, one build per commit; builds are kept in Cache (keyed by the
// package's import path) and reused across searches.
type BuildBisector struct {
	// Builder builds: Lang when Builder is nil.
	Builder Builder
	// Lang names the packages and sets a commit's dependencies up before
	// the build: the repository's language driver. Without one the search
	// is an error wrapping lang.ErrNoDriver.
	Lang  Language
	Cache RunCache
	// ProbeLimit is DefaultProbeLimit when 0: how far back the search
	// starts when no good commit is given.
	ProbeLimit int
	Log        *zap.Logger
}

// Bisect finds, in the git checkout at repoDir, the first commit on bad's
// first-parent history where the package pkg (an import path) does not
// build, and leaves repoDir at bad. A commit where the package does not
// exist yet counts as building. With no good given, the search starts
// ProbeLimit commits back (or at the root commit). Steps counts the builds
// made, CachedRuns those reused.
func (b BuildBisector) Bisect(ctx context.Context, repoDir, good, bad, pkg string) (res task.Bisection, err error) {
	return b.BisectRepo(ctx, gitrepo.Repo{Dir: repoDir}, good, bad, pkg)
}

// BisectRepo is Bisect on a repository: a checkout's, whose git directory
// is kept apart.
func (b BuildBisector) BisectRepo(ctx context.Context, repo gitrepo.Repo, good, bad, pkg string) (res task.Bisection, err error) {
	if b.Builder, err = b.builder(); err != nil {
		return res, err
	}
	badSHA, err := repo.Resolve(ctx, bad)
	if err != nil {
		return res, fmt.Errorf("bisect build: bad commit: %w", err)
	}
	res.Bad = badSHA
	defer func() {
		if cerr := repo.Checkout(context.WithoutCancel(ctx), badSHA); cerr != nil && err == nil {
			err = fmt.Errorf("bisect build: %w", cerr)
		}
	}()
	at := &builds{b: b, repo: repo, pkg: pkg, res: &res}
	if b.Cache != nil {
		if at.cached, err = b.Cache.CommitRuns(ctx, pkg); err != nil {
			return res, fmt.Errorf("bisect build: cached builds of %s: %w", pkg, err)
		}
	}
	goodSHA, err := b.buildingStart(ctx, at, repo, good, badSHA)
	if err != nil {
		return res, err
	}
	rest, err := repo.Path(ctx, goodSHA, badSHA)
	if err != nil {
		return res, fmt.Errorf("bisect build: %w", err)
	}
	if len(rest) == 0 || rest[len(rest)-1] != badSHA {
		return res, fmt.Errorf("bisect build: good %s is not on the first-parent history of %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
	}
	path := append([]string{goodSHA}, rest...)
	// path[lo] builds, path[hi] does not.
	lo, hi := 0, len(path)-1
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		r, err := at.build(ctx, path[mid])
		if err != nil {
			return res, err
		}
		if r == ResultFail {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.Good, res.Blame = path[lo], path[hi]
	res.Finding, res.Confidence = FindingCulprit, 1
	c, err := repo.Show(ctx, res.Blame)
	if err != nil {
		return res, fmt.Errorf("bisect build: %w", err)
	}
	res.Subject, res.Author = c.Subject, c.Author
	if b.Log != nil {
		b.Log.Info("bisected build", zap.String("package", pkg), zap.String("blame", res.Blame), zap.Int("builds", res.Steps), zap.Int("cached", res.CachedRuns))
	}
	return res, nil
}

// buildingStart is the search's good end, where the package builds: good
// resolved, else the commit ProbeLimit back, else the root commit; res.Good
// says which was tried last.
func (b BuildBisector) buildingStart(ctx context.Context, at *builds, repo gitrepo.Repo, good, badSHA string) (string, error) {
	probed := good == ""
	var goodSHA string
	var err error
	if probed {
		goodSHA, err = Bisector{ProbeLimit: b.ProbeLimit}.probeStart(ctx, repo, badSHA)
	} else {
		goodSHA, err = repo.Resolve(ctx, good)
	}
	if err != nil {
		return "", fmt.Errorf("bisect build: good commit: %w", err)
	}
	if goodSHA == badSHA || !repo.IsAncestor(ctx, goodSHA, badSHA) {
		return "", fmt.Errorf("bisect build: good %s is not an ancestor of bad %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
	}
	r, err := at.build(ctx, goodSHA)
	if err != nil {
		return "", err
	}
	if r == ResultFail && probed {
		root, err := rootCommit(ctx, repo, badSHA)
		if err != nil {
			return "", err
		}
		if root != goodSHA && root != badSHA {
			goodSHA = root
			if r, err = at.build(ctx, goodSHA); err != nil {
				return "", err
			}
		}
	}
	at.res.Good = goodSHA
	if r == ResultFail {
		return "", fmt.Errorf("bisect build: %s does not build at good %s either: %w", at.pkg, task.Short(goodSHA), ErrCannotBisect)
	}
	return goodSHA, nil
}

// builds are one build bisection's builds of pkg, from the cache when it
// knows, counted in res.
type builds struct {
	b      BuildBisector
	repo   gitrepo.Repo
	pkg    string
	cached map[string]task.CommitRuns
	res    *task.Bisection
}

// build builds the package at sha: pass when it builds or is not there
// yet, fail when it does not build.
func (at *builds) build(ctx context.Context, sha string) (Result, error) {
	if c, ok := at.cached[sha]; ok {
		switch {
		case c.Failed > 0:
			at.res.CachedRuns++
			return ResultFail, nil
		case c.Passed > 0 || c.Missing > 0:
			at.res.CachedRuns++
			return ResultPass, nil
		}
	}
	if err := at.repo.Checkout(ctx, sha); err != nil {
		return 0, fmt.Errorf("bisect build: %w", err)
	}
	r, _, err := at.b.BuildPackage(ctx, at.repo.Dir, at.pkg)
	at.res.Steps++
	if err != nil {
		return 0, err
	}
	if at.b.Cache != nil {
		if err := at.b.Cache.AddCommitRuns(ctx, at.pkg, sha, r.CommitRuns()); err != nil {
			return 0, fmt.Errorf("bisect build: keep build of %s at %s: %w", at.pkg, task.Short(sha), err)
		}
	}
	if r == ResultMissing {
		r = ResultPass
	}
	return r, nil
}

// BuildPackage compiles the package pkg (as the language names it: an
// import path, a test file) and its tests in the checkout at dir: fail
// (with the compiler's failure) when it does not build; missing (with why)
// when the language resolves no such package there (a commit before the
// package, or before the module). A checkout whose dependencies cannot be
// set up does not build: its failure is the setup's error (the command and
// its output).
func (b BuildBisector) BuildPackage(ctx context.Context, dir, pkg string) (Result, *task.Failure, error) {
	var err error
	if b.Builder, err = b.builder(); err != nil {
		return 0, nil, err
	}
	if err := b.Lang.Setup(ctx, dir); err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return ResultFail, &task.Failure{Package: pkg, Message: err.Error()}, nil
	}
	t, err := b.Lang.Resolve(dir, pkg)
	switch {
	case err != nil:
		return ResultMissing, &task.Failure{Package: pkg, Message: "no such package here: " + err.Error()}, nil
	case !t.IsPackage():
		return ResultMissing, &task.Failure{Package: pkg, Message: "not a package"}, nil
	}
	o, err := b.Builder.Build(ctx, dir, []string{t.Dir})
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, fmt.Errorf("build %s: %w", pkg, err)
	}
	if len(o.Build) == 0 && !o.TimedOut {
		return ResultPass, nil, nil
	}
	f := task.Failure{Package: pkg, Message: "build timed out", Output: o.Output}
	for _, bf := range o.Build {
		if bf.Package == pkg || strings.HasPrefix(bf.Package, pkg+" ") || bf.Package == "" {
			f = bf
			f.Package = pkg
			break
		}
		f = bf
		f.Package = pkg
	}
	return ResultFail, &f, nil
}

// builder is Builder, else Lang when it builds; without either the search
// is an error wrapping lang.ErrNoDriver.
func (b BuildBisector) builder() (Builder, error) {
	if b.Lang == nil {
		return nil, noLanguage("bisect build")
	}
	if b.Builder != nil {
		return b.Builder, nil
	}
	if bl, ok := b.Lang.(Builder); ok {
		return bl, nil
	}
	return nil, fmt.Errorf("bisect build: the language driver builds nothing and no builder is given: %w", lang.ErrNoDriver)
}
