package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// Verdict is what Investigate found out about failing tests.
type Verdict struct {
	Repo   string   `json:"repo"`
	Commit string   `json:"commit"` // bad, resolved
	Tests  []string `json:"tests"`  // canonical IDs
	// Verdict is the finding in one word: reliable (fails every run, and
	// the bisection names its culprit when it can), flaky (passed and
	// failed at the same commit), passing (did not fail again), or
	// added-failing (the culprit is the commit that added the test).
	Verdict string `json:"verdict"`
	// Confidence is how sure the verdict is, 0..1: the bisection's
	// posterior for its finding; 1 for flaky (both outcomes were seen);
	// for passing, the chance that a test failing one run in ten would
	// have failed at least once in the runs made.
	Confidence float64 `json:"confidence"`
	// CachedRuns counts the runs reused from earlier searches.
	CachedRuns int `json:"cached_runs"`
	// Flakiness is reliable, flaky or passing, with its runs; Evidence has
	// the same test by test.
	Flakiness task.Flakiness `json:"flakiness"`
	Evidence  []TestEvidence `json:"evidence"`
	// Bisection is set when the failure was reliable and a bisection ran;
	// BisectError says why it is partial or missing.
	Bisection   *task.Bisection `json:"bisection,omitempty"`
	BisectError string          `json:"bisect_error,omitempty"`
	// Fingerprint is the first failure's seen at bad; "" when none failed.
	Fingerprint string        `json:"fingerprint,omitempty"`
	Failure     *task.Failure `json:"failure,omitempty"`
	// TestRuns counts the test runs spent: reruns and bisection.
	TestRuns int `json:"runs_spent"`
}

// String is a short report for people.
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tests:       %s\n", strings.Join(v.Tests, ", "))
	fmt.Fprintf(&b, "at:          %s\n", v.Commit)
	fmt.Fprintf(&b, "verdict:     %s (%d/%d runs failed at bad; %.1f%% sure)\n", v.Verdict, v.Flakiness.Failures, v.Flakiness.Runs, 100*v.Confidence)
	if len(v.Evidence) > 1 {
		for _, e := range v.Evidence {
			fmt.Fprintf(&b, "  %s: %s (%d/%d)\n", e.Test, e.Verdict(), e.Failures, e.Runs)
		}
	}
	if v.Failure != nil {
		fmt.Fprintf(&b, "failure:     %s\n", v.Failure.Message)
		fmt.Fprintf(&b, "fingerprint: %s\n", v.Fingerprint)
	}
	if bis := v.Bisection; bis != nil {
		if bis.Blame != "" {
			fmt.Fprintf(&b, "blame:       %s %s (%s)\n", bis.Blame, bis.Subject, bis.Author)
			if bis.AddedTest {
				fmt.Fprintf(&b, "             failing since it was added\n")
			}
		}
		if bis.Good != "" {
			fmt.Fprintf(&b, "last good:   %s\n", bis.Good)
		}
		fmt.Fprintf(&b, "bisect:      %d test runs, %d cached runs reused, %.1f%% sure, flake rate about %.0f%%, evidence %.0f to 1 against a test failing half its runs everywhere\n", bis.Steps, bis.CachedRuns, 100*bis.Confidence, 100*bis.FlakeRate, bis.Evidence)
	}
	if v.BisectError != "" {
		fmt.Fprintf(&b, "bisect:      %s\n", v.BisectError)
	}
	fmt.Fprintf(&b, "test runs:   %d\n", v.TestRuns)
	return b.String()
}

// Investigate triages failing tests of the repository at repoPath without a
// store or a queue: it re-runs them reruns times at bad ("" for HEAD), and,
// when they fail reliably, bisects from good ("" to probe back for one).
// Tests may be named as reports name them or bare (TestParse,
// tests/test_x.py::test_y, test_y). It works on a clone, so the
// repository's work tree is left alone (and its uncommitted changes are not
// seen); good and bad are resolved in the clone, where the repository's
// other branches are origin/NAME.
//
// langs chooses the repository's driver from the checkout at bad, which
// sets the checkout up, names the tests and runs them unless b has a
// runner (or b's runner is ReportRuns(nil, …), which then reports the
// driver's runs). A repository no driver knows (or no langs) is an error
// wrapping lang.ErrNoDriver; one whose setup fails is an error saying so.
func Investigate(ctx context.Context, langs Languages, b bisect.Bisector, repoPath, good, bad string, tests []string, reruns int) (Verdict, error) {
	log := b.Log
	if log == nil {
		log = zap.NewNop()
	}
	return investigate(ctx, b.Runner, langs, b, log, repoPath, good, bad, tests, reruns)
}

// Investigate is the package's Investigate with the service's runner,
// languages, bisection bound, reruns and log.
func (t *Triage) Investigate(ctx context.Context, repoPath, good, bad string, tests []string) (Verdict, error) {
	return investigate(ctx, t.runner, t.cfg.Languages, t.bisector(nil, nil, t.log), t.log, repoPath, good, bad, tests, t.cfg.Reruns)
}

func investigate(ctx context.Context, runner Runner, langs Languages, b bisect.Bisector, log *zap.Logger, repoPath, good, bad string, tests []string, reruns int) (Verdict, error) {
	if len(tests) == 0 {
		return Verdict{}, errors.New("investigate: no test named")
	}
	if bad == "" {
		bad = "HEAD"
	}
	if reruns < 1 {
		reruns = DefaultReruns
	}
	repo := repoPath
	if !strings.Contains(repo, "://") {
		if abs, err := filepath.Abs(repo); err == nil {
			repo = abs
		}
	}
	ws, err := workspace.Open(ctx, repo, bad, b.WorkDir)
	if err != nil {
		return Verdict{}, fmt.Errorf("investigate %s: %w", repoPath, err)
	}
	defer ws.Close()
	v := Verdict{Repo: repo, Commit: ws.Commit}
	log = log.With(zap.String("repo", repo), zap.String("commit", ws.Commit))
	d, err := setUpLanguage(ctx, langs, repo, ws)
	if err != nil {
		return v, fmt.Errorf("investigate %s: %w", repoPath, err)
	}
	runner, b.Lang = bindRunner(runner, d), d
	b.Runner = runner
	ids, err := bisect.Canonical(b.Lang, ws.Dir, tests)
	if err != nil {
		return v, fmt.Errorf("investigate %s at %s: %w", repoPath, task.Short(ws.Commit), err)
	}
	v.Tests = ids
	first, evidence, topUp := RerunPlan(reruns, false)
	rep, err := Reproduce(ctx, runner, ws.Dir, ids, first)
	v.TestRuns += rep.Flakiness.Runs
	if err != nil {
		return v, fmt.Errorf("investigate %s at %s: %w", repoPath, task.Short(ws.Commit), err)
	}
	v.reproduced(repo, rep, fingerprintDrivers(langs, d))
	log.Info("reproduced", zap.String("verdict", v.Flakiness.Verdict), zap.Int("runs", v.Flakiness.Runs), zap.Int("failures", v.Flakiness.Failures))
	if v.Flakiness.Verdict != VerdictReliable {
		return v, nil
	}
	if b.Log == nil {
		b.Log = log
	}
	b.Reproduction, b.Evidence = rep.results(), evidence
	bis, err := b.BisectFailing(ctx, ws.Repo, good, ws.Commit, ids)
	v.TestRuns += bis.Steps
	v.CachedRuns = bis.CachedRuns
	if bis.Finding != "" {
		v.Confidence = bis.Confidence
	}
	if bis.AddedTest {
		v.Verdict = VerdictAddedFailing
	}
	switch {
	case errors.Is(err, bisect.ErrFailsAtGood) && good != "":
		return v, fmt.Errorf("investigate %s: %w", repoPath, &noVerdictError{reason: FailsAtGood(ids, good)})
	case errors.Is(err, bisect.ErrCannotBisect):
		v.BisectError = err.Error()
	case err != nil:
		return v, fmt.Errorf("investigate %s: %w", repoPath, err)
	}
	v.Bisection = &bis
	if bis.Blame != "" || topUp == 0 {
		return v, nil
	}
	// No culprit: the re-runs at bad owed are made now (see RerunPlan).
	more, err := Reproduce(ctx, runner, ws.Dir, ids, topUp)
	v.TestRuns += more.Flakiness.Runs
	if err != nil {
		return v, fmt.Errorf("investigate %s at %s after the bisection: %w", repoPath, task.Short(ws.Commit), err)
	}
	rep = rep.Add(more)
	v.Flakiness, v.Evidence = rep.Flakiness, rep.Tests
	if rep.Flakiness.Verdict != VerdictReliable {
		v.Verdict, v.Confidence = rep.Flakiness.Verdict, reproConfidence(rep.Flakiness)
	}
	return v, nil
}

// setUpLanguage is the driver langs chooses for the repository from the
// workspace, with the workspace set up for its tests. No langs, or no
// driver for the repository, is an error wrapping lang.ErrNoDriver.
func setUpLanguage(ctx context.Context, langs Languages, repo string, ws *workspace.Workspace) (lang.Driver, error) {
	if langs == nil {
		return nil, fmt.Errorf("%s: %w (none is configured)", repo, lang.ErrNoDriver)
	}
	d, err := langs.For(repo, ws.Dir)
	if err != nil {
		return nil, err
	}
	if err := d.Setup(ctx, ws.Dir); err != nil {
		return nil, fmt.Errorf("set up the %s repository at %s: %w", d.Name(), task.Short(ws.Commit), err)
	}
	return d, nil
}

// reproduced records the reproduction: the flakiness, each test's
// evidence, and the first failure and its fingerprint (normalised by
// drivers).
func (v *Verdict) reproduced(repo string, rep Reproduction, drivers []lang.Driver) {
	v.Flakiness, v.Evidence = rep.Flakiness, rep.Tests
	v.Verdict, v.Confidence = rep.Flakiness.Verdict, reproConfidence(rep.Flakiness)
	for _, e := range rep.Tests {
		if e.Failure != nil {
			f := *e.Failure
			v.Failure = &f
			v.Fingerprint = Fingerprint(repo, f, drivers...)
			return
		}
	}
}

// results are the reproduction's runs as the bisection's evidence at bad:
// one result a run and test.
func (rep Reproduction) results() []bisect.Result {
	var out []bisect.Result
	for _, e := range rep.Tests {
		for k := range e.Runs {
			r := bisect.ResultPass
			if k < e.Failures {
				r = bisect.ResultFail
			}
			out = append(out, r)
		}
	}
	return out
}

// reproConfidence is how sure a reproduction's verdict is before any
// bisection: flaky is certain (both outcomes were seen at one commit);
// passing and reliable are as sure as the runs make them against a test
// that fails (or passes) one run in ten.
func reproConfidence(f task.Flakiness) float64 {
	if f.Verdict == VerdictFlaky {
		return 1
	}
	return round3(1 - math.Pow(0.9, float64(f.Runs)))
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// ReproduceAt is Investigate without the bisection: the tests reproduced
// at head in a clone of repoPath, reruns times each, each with its own
// evidence, with the driver langs chooses from the clone.
func ReproduceAt(ctx context.Context, langs Languages, repoPath, head string, tests []string, reruns int) (Verdict, error) {
	ws, err := workspace.Open(ctx, repoPath, head, "")
	if err != nil {
		return Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	defer ws.Close()
	d, err := setUpLanguage(ctx, langs, repoPath, ws)
	if err != nil {
		return Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	ids, err := testrun.Canonical(d, ws.Dir, tests)
	if err != nil {
		return Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	rep, err := Reproduce(ctx, d, ws.Dir, ids, reruns)
	if err != nil {
		return Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	return Verdict{Repo: repoPath, Commit: ws.Commit, Tests: ids, Flakiness: rep.Flakiness, Evidence: rep.Tests, TestRuns: rep.Flakiness.Runs}, nil
}
