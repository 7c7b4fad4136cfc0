package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Builder compiles packages and their tests without running any test;
// testrun.Runner satisfies it. A Runner that is not a Builder builds with
// testrun's defaults.
type Builder interface {
	Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
}

// isBuildGroup says the group's failures are packages that did not build
// (a build failure names its package and no test).
func isBuildGroup(g Group) bool {
	return len(g.Failures) > 0 && !slices.ContainsFunc(g.Failures, func(f task.Failure) bool { return f.Test != "" })
}

func (t *Triage) builder() Builder {
	if b, ok := t.runner.(Builder); ok {
		return b
	}
	return testrun.Runner{}
}

// buildEvidence reproduces a build group's failures in the workspace and
// bisects them; the builds use work, which ends when another task takes the
// group. A non-empty reason drops the group; bisErr says why there is
// no blame (wrapping ErrCannotBisect) when the search could not name one.
func (p *process) buildEvidence(ctx, work context.Context, repo gitrepo.Repo, tk *task.Task, out *Outcome, log *zap.Logger) (bis task.Bisection, bisErr error, reason string, err error) {
	commit, dir := tk.Commit, repo.Dir
	var pkgs []string
	for _, f := range tk.Failures {
		if !slices.Contains(pkgs, f.Package) {
			pkgs = append(pkgs, f.Package)
		}
	}
	b := BuildBisector{Builder: p.t.builder(), Log: log}
	if c, ok := p.t.store.(RunCache); ok {
		b.Cache = c
	}
	// Reproduce: every package of the group must fail to build here.
	var local []task.Failure
	for _, pkg := range pkgs {
		r, f, err := b.build(work, dir, pkg)
		out.TestRuns++
		if err != nil {
			return bis, nil, "", err
		}
		switch r {
		case ResultMissing:
			return bis, nil, fmt.Sprintf("cannot build %s at %s: %s", pkg, task.Short(commit), f.Message), nil
		case ResultPass:
			return bis, nil, fmt.Sprintf("does not reproduce at %s: package %s builds", task.Short(commit), pkg), nil
		}
		if f != nil {
			local = append(local, *f)
		}
		if b.Cache != nil {
			if err := b.Cache.AddCommitRuns(ctx, pkg, commit, counts(ResultFail)); err != nil {
				return bis, nil, "", fmt.Errorf("keep build of %s at %s: %w", pkg, task.Short(commit), err)
			}
		}
	}
	tk.Flakiness = task.Flakiness{Runs: len(pkgs), Failures: len(pkgs), Verdict: VerdictReliable}
	tk.Failures = localBuildFailures(tk.Failures, local)
	log.Info("reproduced build failure", zap.Strings("packages", pkgs))

	reason, err = p.fixedAtHead(work, repo, tk, log, func() (bool, string, error) {
		for _, pkg := range pkgs {
			r, _, err := b.build(work, dir, pkg)
			out.TestRuns++
			if err != nil || r != ResultPass {
				return false, "", err
			}
		}
		return true, "package " + strings.Join(pkgs, ", ") + " builds", nil
	})
	if err != nil || reason != "" {
		return bis, nil, reason, err
	}
	bis, bisErr = b.bisect(work, repo, p.in.Good, commit, pkgs[0])
	out.TestRuns += bis.Steps
	if bisErr != nil && !errors.Is(bisErr, ErrCannotBisect) {
		return bis, nil, "", bisErr
	}
	return bis, bisErr, "", nil
}

// localBuildFailures gives CI's build failures the compiler's output as it
// is in the workspace (paths relative to it, for the agent), keeping CI's
// message when it has one.
func localBuildFailures(ci, local []task.Failure) []task.Failure {
	out := slices.Clone(ci)
	for i, f := range out {
		for _, l := range local {
			if l.Package != f.Package {
				continue
			}
			if f.Message == "" {
				out[i].Message = l.Message
			}
			out[i].Output, out[i].Frames = l.Output, l.Frames
			break
		}
	}
	return out
}

// BuildBisector finds the commit that broke a package's build. A build is
// deterministic, so it is a plain binary search over bad's first-parent
// history, one build per commit; builds are kept in Cache (keyed by the
// package's import path) and reused across searches.
type BuildBisector struct {
	Builder Builder
	Cache   RunCache
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
	return b.bisect(ctx, gitrepo.Repo{Dir: repoDir}, good, bad, pkg)
}

// bisect is Bisect on a repository: a checkout's, whose git directory is
// kept apart.
func (b BuildBisector) bisect(ctx context.Context, repo gitrepo.Repo, good, bad, pkg string) (res task.Bisection, err error) {
	if b.Builder == nil {
		b.Builder = testrun.Runner{}
	}
	repoDir := repo.Dir
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
	var cached map[string]task.CommitRuns
	if b.Cache != nil {
		if cached, err = b.Cache.CommitRuns(ctx, pkg); err != nil {
			return res, fmt.Errorf("bisect build: cached builds of %s: %w", pkg, err)
		}
	}
	// at builds the package at sha, from the cache when it knows.
	at := func(sha string) (Result, error) {
		if c, ok := cached[sha]; ok {
			switch {
			case c.Failed > 0:
				res.CachedRuns++
				return ResultFail, nil
			case c.Passed > 0 || c.Missing > 0:
				res.CachedRuns++
				return ResultPass, nil
			}
		}
		if err := repo.Checkout(ctx, sha); err != nil {
			return 0, fmt.Errorf("bisect build: %w", err)
		}
		r, _, err := b.build(ctx, repoDir, pkg)
		res.Steps++
		if err != nil {
			return 0, err
		}
		if b.Cache != nil {
			if err := b.Cache.AddCommitRuns(ctx, pkg, sha, counts(r)); err != nil {
				return 0, fmt.Errorf("bisect build: keep build of %s at %s: %w", pkg, task.Short(sha), err)
			}
		}
		if r == ResultMissing {
			r = ResultPass
		}
		return r, nil
	}

	probed := good == ""
	var goodSHA string
	if probed {
		goodSHA, err = Bisector{ProbeLimit: b.ProbeLimit}.probeStart(ctx, repo, badSHA)
	} else {
		goodSHA, err = repo.Resolve(ctx, good)
	}
	if err != nil {
		return res, fmt.Errorf("bisect build: good commit: %w", err)
	}
	if goodSHA == badSHA || !repo.IsAncestor(ctx, goodSHA, badSHA) {
		return res, fmt.Errorf("bisect build: good %s is not an ancestor of bad %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
	}
	r, err := at(goodSHA)
	if err != nil {
		return res, err
	}
	if r == ResultFail && probed {
		root, err := rootCommit(ctx, repo, badSHA)
		if err != nil {
			return res, err
		}
		if root != goodSHA && root != badSHA {
			goodSHA = root
			if r, err = at(goodSHA); err != nil {
				return res, err
			}
		}
	}
	res.Good = goodSHA
	if r == ResultFail {
		return res, fmt.Errorf("bisect build: %s does not build at good %s either: %w", pkg, task.Short(goodSHA), ErrCannotBisect)
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
		r, err := at(path[mid])
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

// build compiles the package pkg (an import path) and its tests in the
// checkout at dir: fail (with the compiler's failure) when it does not
// build; missing (with why) when the module has no such package, or there
// is no Go module there at all (a report from another language's runner,
// a commit before go.mod).
func (b BuildBisector) build(ctx context.Context, dir, pkg string) (Result, *task.Failure, error) {
	if b.Builder == nil {
		b.Builder = testrun.Runner{}
	}
	t, err := testrun.Resolve(dir, pkg)
	switch {
	case errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous):
		return ResultMissing, &task.Failure{Package: pkg, Message: "no such package in the module"}, nil
	case err != nil:
		return ResultMissing, &task.Failure{Package: pkg, Message: "not a Go module: " + err.Error()}, nil
	case !t.IsPackage():
		return ResultMissing, &task.Failure{Package: pkg, Message: "not a Go package"}, nil
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
