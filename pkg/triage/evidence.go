package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// testEvidence records a test group's CI failures, re-runs its tests in the
// workspace at dir, and bisects them when they fail reliably; the runs use
// work, which ends when another task takes the group (lostTo). A non-empty
// reason drops the group; bisErr says why there is no blame (wrapping
// bisect.ErrCannotBisect) when the search could not name one.
func (p *process) testEvidence(ctx, work context.Context, lostTo func() string, g Group, repo gitrepo.Repo, tk *task.Task, out *Outcome, log *zap.Logger) (bis task.Bisection, bisErr error, reason string, err error) {
	t, commit, dir := p.t, tk.Commit, repo.Dir
	for _, f := range g.Failures {
		if err := t.store.RecordRun(ctx, f.ID(), true); err != nil {
			return bis, nil, "", fmt.Errorf("record CI failure of %s: %w", f.ID(), err)
		}
	}
	ids, err := bisect.Canonical(p.bisectLanguage(), dir, out.Tests)
	if err != nil {
		return bis, nil, fmt.Sprintf("cannot run %s at %s: %v", strings.Join(out.Tests, ", "), task.Short(commit), err), nil
	}
	hist := p.history(ctx, ids, log)
	first, evidence, topUp := RerunPlan(hist.reruns, hist.score.Flaky())
	rep, err := Reproduce(work, p.runner, dir, ids, first)
	out.TestRuns += rep.Flakiness.Runs
	if lostTo() != "" {
		return bis, nil, "", err
	}
	if err != nil {
		var nr *NotRunError
		if errors.As(err, &nr) {
			return bis, nil, fmt.Sprintf("does not reproduce at %s: %s", task.Short(commit), nr), nil
		}
		return bis, nil, "", err
	}
	tk.Failures = canonicalFailures(p.bisectLanguage(), dir, relativeFailures(p.bisectLanguage(), dir, tk.Failures, rep))
	if reason, err := p.judgeReruns(ctx, tk, hist, Reproduction{}, rep, log); reason != "" || err != nil {
		return bis, nil, reason, err
	}

	reason, err = p.fixedAtHead(work, repo, tk, log, func() (bool, string, error) {
		if ok, why := p.setUp(work, dir); !ok {
			return false, why, nil
		}
		at, err := Reproduce(work, p.runner, dir, ids, hist.reruns)
		out.TestRuns += at.Flakiness.Runs
		var nr *NotRunError
		switch {
		case errors.As(err, &nr):
			return false, nr.Error(), nil
		case err != nil:
			return false, "", err
		}
		return at.Flakiness.Verdict == VerdictPassing, fmt.Sprintf("%s passed %d/%d runs", strings.Join(ids, ", "), at.Flakiness.Runs, at.Flakiness.Runs), nil
	})
	if lostTo() != "" || err != nil || reason != "" {
		return bis, nil, reason, err
	}

	b := t.bisector(p.runner, p.bisectLanguage(), log)
	b.FlakeRate = hist.score.Rate
	b.Evidence = evidence
	bis, err = p.bisect(work, b, repo, p.in.Good, commit, ids, log)
	out.TestRuns += bis.Steps
	switch {
	case lostTo() != "":
		return bis, nil, "", err
	case errors.Is(err, bisect.ErrFailsAtGood) && p.in.Good != "":
		return bis, nil, "", &noVerdictError{reason: FailsAtGood(ids, p.in.Good)}
	case errors.Is(err, bisect.ErrCannotBisect):
		bisErr = err
	case err != nil:
		return bis, nil, "", err
	}
	if bis.Blame != "" || topUp == 0 {
		return bis, bisErr, "", nil
	}
	// No culprit stood for the re-runs not made at bad: they are made
	// now, and a pass among them makes the failure flaky after all.
	more, err := Reproduce(work, p.runner, dir, ids, topUp)
	out.TestRuns += more.Flakiness.Runs
	if lostTo() != "" {
		return bis, nil, "", err
	}
	if err != nil {
		return bis, nil, "", fmt.Errorf("re-run at %s after the bisection: %w", task.Short(commit), err)
	}
	if reason, err := p.judgeReruns(ctx, tk, hist, rep, more, log); reason != "" || err != nil {
		return bis, nil, reason, err
	}
	return bis, bisErr, "", nil
}

// judgeReruns records the re-runs more at the task's commit (after earlier
// ones of the same tests), sets the task's flakiness from all of them, and
// says why the group is dropped when they are not a reliable failure:
// flaky (quarantined with its evidence) or passing.
func (p *process) judgeReruns(ctx context.Context, tk *task.Task, hist testHistory, earlier, more Reproduction, log *zap.Logger) (reason string, err error) {
	commit := tk.Commit
	rep := earlier.Add(more)
	tk.Flakiness = rep.Flakiness
	tk.FlakinessByTest = ByTest(rep.Tests)
	history, err := p.record(ctx, more)
	if err != nil {
		return "", err
	}
	flakyHere, err := p.keepReruns(ctx, hist, commit, more)
	if err != nil {
		return "", err
	}
	if flakyHere && rep.Flakiness.Verdict == VerdictReliable {
		// It passed at this commit before: flaky by definition.
		rep.Flakiness.Verdict = VerdictFlaky
		tk.Flakiness.Verdict = VerdictFlaky
		history += "; it passed at this commit before"
	}
	if hist.score.Flaky() {
		history += fmt.Sprintf("; flaky at %d of %d commits, flake rate %.0f%%", hist.score.FlakyCommits, hist.score.Commits, 100*hist.score.Rate)
	}
	log.Info("reproduced", zap.String("verdict", rep.Flakiness.Verdict), zap.Int("runs", rep.Flakiness.Runs), zap.Int("failures", rep.Flakiness.Failures), zap.String("history", history))
	switch rep.Flakiness.Verdict {
	case VerdictFlaky:
		reason := fmt.Sprintf("flaky: %d/%d runs failed at %s; %s", rep.Flakiness.Failures, rep.Flakiness.Runs, task.Short(commit), history)
		if err := p.quarantine(ctx, *tk, rep, hist, reason); err != nil {
			return "", err
		}
		return reason, nil
	case VerdictPassing:
		return fmt.Sprintf("does not reproduce at %s: 0/%d runs failed; %s", task.Short(commit), rep.Flakiness.Runs, history), nil
	}
	return "", nil
}

// bisector is the service's bisection with runner and the language l: its
// bounds, and the store's runs by commit as its cache when
// the store keeps them.
func (t *Triage) bisector(runner Runner, l bisect.Language, log *zap.Logger) bisect.Bisector {
	b := bisect.Bisector{Runner: runner, Lang: l, MaxSteps: t.cfg.MaxBisectSteps, Confidence: t.cfg.Confidence, Parallel: t.cfg.BisectParallel, WorkDir: t.cfg.WorkDir, Log: log}
	if c, ok := t.store.(RunCache); ok {
		b.Cache = c
	}
	return b
}

// isBuildGroup says the group's failures are packages that did not build
// (a build failure names its package and no test).
func isBuildGroup(g Group) bool {
	return len(g.Failures) > 0 && !slices.ContainsFunc(g.Failures, func(f task.Failure) bool { return f.Test != "" })
}

// buildEvidence reproduces a build group's failures in the workspace and
// bisects them; the builds use work, which ends when another task takes the
// group. A non-empty reason drops the group; bisErr says why there is no
// blame (wrapping bisect.ErrCannotBisect) when the search could not name
// one.
func (p *process) buildEvidence(ctx, work context.Context, repo gitrepo.Repo, tk *task.Task, out *Outcome, log *zap.Logger) (bis task.Bisection, bisErr error, reason string, err error) {
	commit, dir := tk.Commit, repo.Dir
	var pkgs []string
	for _, f := range tk.Failures {
		if !slices.Contains(pkgs, f.Package) {
			pkgs = append(pkgs, f.Package)
		}
	}
	b := bisect.BuildBisector{Builder: p.builder(), Lang: p.bisectLanguage(), Log: log}
	if c, ok := p.t.store.(RunCache); ok {
		b.Cache = c
	}
	// Reproduce: every package of the group must fail to build here.
	var local []task.Failure
	for _, pkg := range pkgs {
		r, f, err := b.BuildPackage(work, dir, pkg)
		out.TestRuns++
		if err != nil {
			return bis, nil, "", err
		}
		switch r {
		case bisect.ResultMissing:
			return bis, nil, fmt.Sprintf("cannot build %s at %s: %s", pkg, task.Short(commit), f.Message), nil
		case bisect.ResultPass:
			return bis, nil, fmt.Sprintf("does not reproduce at %s: package %s builds", task.Short(commit), pkg), nil
		}
		if f != nil {
			local = append(local, *f)
		}
		if b.Cache != nil {
			if err := b.Cache.AddCommitRuns(ctx, pkg, commit, bisect.ResultFail.CommitRuns()); err != nil {
				return bis, nil, "", fmt.Errorf("keep build of %s at %s: %w", pkg, task.Short(commit), err)
			}
		}
	}
	tk.Flakiness = task.Flakiness{Runs: len(pkgs), Failures: len(pkgs), Verdict: VerdictReliable}
	tk.Failures = localBuildFailures(tk.Failures, local)
	log.Info("reproduced build failure", zap.Strings("packages", pkgs))

	reason, err = p.fixedAtHead(work, repo, tk, log, func() (bool, string, error) {
		for _, pkg := range pkgs {
			r, _, err := b.BuildPackage(work, dir, pkg)
			out.TestRuns++
			if err != nil || r != bisect.ResultPass {
				return false, "", err
			}
		}
		return true, "package " + strings.Join(pkgs, ", ") + " builds", nil
	})
	if err != nil || reason != "" {
		return bis, nil, reason, err
	}
	bis, bisErr = b.BisectRepo(work, repo, p.in.Good, commit, pkgs[0])
	out.TestRuns += bis.Steps
	if bisErr != nil && !errors.Is(bisErr, bisect.ErrCannotBisect) {
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

// noVerdictError ends a group's triage with no verdict on the failure:
// its task is saved failed with reason, and the failure's next report
// takes the group over (takeOverFrom).
type noVerdictError struct{ reason string }

func (e *noVerdictError) Error() string { return e.reason }

// FailsAtGood is why a failure is not repaired when its tests fail at the
// good commit, where CI saw them pass (or a person said they do): redfix's runs differ from CI's, so
// neither the blame nor a patch's test results could be trusted. The
// usual cause is a setting the tests need that CI's workflow gives them
// (a time zone, a locale, a variable, a runner option), which the
// repository's .redfix.yaml can name.
func FailsAtGood(tests []string, good string) string {
	verb := "fail"
	if len(tests) == 1 {
		verb = "fails"
	}
	return fmt.Sprintf("not reproducible here: %s %s at %s too, a commit CI saw green: the tests run differently under redfix than in CI; name what they need (variables such as TZ, runner options) in .redfix.yaml's tests: section",
		strings.Join(tests, ", "), verb, task.Short(good))
}
