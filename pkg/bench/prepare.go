package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// prepare makes the task t ready to replay: a repository of its history up
// to its base with its test patch committed, its driver, its blame (given,
// or found by bisection from its good commit) and its tests' failures.
func (r *Runner) prepare(ctx context.Context, t Task) (prepared, error) {
	var p prepared
	if r.WorkDir != "" {
		if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
			return p, err
		}
	}
	dir, err := os.MkdirTemp(r.WorkDir, "redfix-bench-")
	if err != nil {
		return p, err
	}
	p.dir = dir
	p.repo = filepath.Join(dir, "repo")
	repo, base, err := baseCheckout(ctx, t, p.repo)
	if err != nil {
		return p, err
	}
	if p.lang, err = language(r.Languages, t.Repo, p.repo); err != nil {
		return p, err
	}
	if err := applyTestPatch(ctx, repo, p.lang, t, base, filepath.Join(dir, "tests.diff")); err != nil {
		return p, err
	}
	if p.commit, err = repo.Resolve(ctx, "HEAD"); err != nil {
		return p, err
	}
	if t.Blame != "" {
		c, err := repo.Show(ctx, t.Blame)
		if err != nil {
			return p, fmt.Errorf("blame %s is not in the history of the task's base: %w", t.Blame, err)
		}
		p.blame = task.Bisection{Blame: c.SHA, Bad: p.commit, Subject: c.Subject, Author: c.Author}
	}
	if t.Good != "" {
		if p.blame, err = r.bisect(ctx, t, p); err != nil {
			return p, err
		}
	}
	return p, p.reproduce(ctx, t)
}

// baseCheckout makes a repository at dir holding the task's history up to
// its base only (the agent cannot find the fix in it), checked out on
// main, and returns it with the base's commit.
func baseCheckout(ctx context.Context, t Task, dir string) (gitrepo.Repo, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return gitrepo.Repo{}, "", err
	}
	base := t.Base
	if st, err := os.Stat(t.Repo); err == nil && st.IsDir() {
		sha, err := gitrepo.Repo{Dir: t.Repo}.Resolve(ctx, t.Base)
		if err != nil {
			return gitrepo.Repo{}, "", fmt.Errorf("base %s in %s: %w", t.Base, t.Repo, err)
		}
		base = sha
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		return repo, "", err
	}
	if err := repo.Fetch(ctx, t.Repo, base); err != nil {
		return repo, "", fmt.Errorf("fetch the task's base: %w", err)
	}
	if _, err := repo.Git(ctx, "checkout", "-q", "-B", "main", "FETCH_HEAD"); err != nil {
		return repo, "", err
	}
	return repo, base, nil
}

// applyTestPatch commits the task's test patch, when it has one, on top
// of the base (written to file first): a patch that changes files the
// language does not call tests is refused.
func applyTestPatch(ctx context.Context, repo gitrepo.Repo, l Language, t Task, base, file string) error {
	if strings.TrimSpace(t.TestPatch) == "" {
		return nil
	}
	if files, err := patchFiles(t.TestPatch); err != nil {
		return fmt.Errorf("test_patch: %w", err)
	} else if bad := nonTestFiles(l, files); len(bad) > 0 {
		return fmt.Errorf("test_patch changes files that are not tests: %s", strings.Join(bad, ", "))
	}
	if err := os.WriteFile(file, []byte(t.TestPatch), 0o644); err != nil {
		return err
	}
	if err := repo.Apply(ctx, file); err != nil {
		return fmt.Errorf("test_patch does not apply at %s: %w", task.Short(base), err)
	}
	_, err := repo.CommitAll(ctx, "The tests of the task")
	return err
}

// reproduce runs the task's tests at its commit: they fail there, as the
// task says (each itself or one of its subtests, parameters or members,
// or its package does not build), and their failures are what the agent
// is told. It settles the packages the scoring runs.
func (p *prepared) reproduce(ctx context.Context, t Task) error {
	ws, err := workspace.Open(ctx, p.repo, p.commit, filepath.Join(p.dir, "ws"))
	if err != nil {
		return err
	}
	defer ws.Close()
	ctx = sandbox.WithRepo(ctx, p.repo)
	if err := p.lang.Setup(ctx, ws.Dir); err != nil {
		return fmt.Errorf("set up the task's dependencies: %w", err)
	}
	out, err := p.lang.Run(ctx, ws.Dir, t.Tests, 1)
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if len(out.Unknown) > 0 {
		return fmt.Errorf("the task's tests: %s", strings.Join(out.Unknown, "; "))
	}
	p.failures = append(append(p.failures, out.Failed...), out.Build...)
	// The task's packages as RunPackages takes them (Go's directories
	// for its import paths), when the driver names them otherwise.
	runPkgs := t.Packages
	if pd, ok := p.lang.(PackageDirs); ok {
		if runPkgs, err = pd.RunPackageNames(ws.Dir, t.Packages); err != nil {
			return err
		}
	}
	var passing []string
	for _, id := range t.Tests {
		tg, err := p.lang.Resolve(ws.Dir, id)
		if err != nil {
			return err
		}
		if d := packageDir(p.lang, tg); len(t.Packages) == 0 && !slices.Contains(p.pkgs, d) {
			p.pkgs = append(p.pkgs, d)
		}
		if len(out.Build) == 0 && !slices.ContainsFunc(out.Failed, func(f task.Failure) bool {
			return under(f.ID(), tg.ID)
		}) {
			passing = append(passing, tg.ID)
		}
	}
	// A test that did not run because another test of its package stopped
	// the run (a panic ends a Go test binary) is run on its own before the
	// task is judged invalid.
	if len(passing) > 0 {
		if passing, err = p.aloneFailing(ctx, ws.Dir, passing, out); err != nil {
			return err
		}
	}
	if len(passing) > 0 {
		return fmt.Errorf("the task's tests do not fail at its commit: %s (%s)", strings.Join(passing, ", "), out.Summary())
	}
	for _, d := range runPkgs {
		if !slices.Contains(p.pkgs, d) {
			p.pkgs = append(p.pkgs, d)
		}
	}
	return nil
}
