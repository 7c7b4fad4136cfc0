package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/testenv"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// Repair is `worker repair`: the harness, the gates and the local publisher
// on a local clone whose HEAD fails the test. Without --blame it finds the
// commit that broke the test with triage's bisection, probing back from
// HEAD for a commit where the test passes. Whatever happens after the
// reproduction, it writes what it tried (report.md and trajectory.jsonl)
// under --out, and ends with one line saying why it stopped.
func Repair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return repairCommand(ctx, args, os.Getenv, stdout, stderr)
}

// repairCommand is Repair with the environment read through getenv.
func repairCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		repoPath, blame, good, out string
		tests                      stringList
		reruns                     int
	)
	fs := newCommandLine("repair", stderr, getenv)
	fs.StringVar(&repoPath, "repo", ".", "the local clone; its HEAD must fail the test")
	fs.Var(&tests, "test", "the failing test, as reports name it or bare (TestParse/sub); repeatable")
	fs.StringVar(&blame, "blame", "", "the commit that broke the test (default: found by bisection)")
	fs.StringVar(&good, "good", "", "a commit where the test passes: bisection searches from it to HEAD (default: probing back from HEAD)")
	fs.StringVar(&out, "out", "", "directory for the pull request and the report of the attempt (default: REPO/../redfix-pull-requests)")
	fs.IntVar(&reruns, "reruns", triage.DefaultReruns, "runs at HEAD to tell a reliable failure from a flaky one")
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if len(tests) == 0 {
		return Usage("repair: --test is required")
	}
	if blame != "" && good != "" {
		return Usage("repair: give --blame (the commit that broke the test) or --good (where to bisect from), not both")
	}
	// What repair prints holds the repository's text (test names and
	// output, commit subjects) and the agent's: nothing in it may drive
	// the terminal.
	stdout = termsafe.NewWriter(stdout)
	abs, err := filepath.Abs(repoPath)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(abs), "redfix-pull-requests")
	}
	cfg.Publish.Dir = out
	cleanup, err := cfg.RunDir("repair-", log)
	if err != nil {
		return err
	}
	defer cleanup()
	defer limitMemory(cfg, log)()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox: %s\n", sbox)
	ctx = sandbox.WithRepo(ctx, abs)
	repo := gitrepo.Repo{Dir: abs}
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return fmt.Errorf("repair: %s is not a git repository with commits: %w", abs, err)
	}
	t := task.Task{ID: "repair-" + task.Short(head), Repo: abs, Commit: head, Status: task.StatusRunning, CreatedAt: time.Now().UTC()}
	rec := &worker.RepairReport{Dir: filepath.Join(out, t.ID), Started: time.Now(), Redactor: redactor(cfg)}

	if good, err = resolveRepairRevs(ctx, repo, blame, good, &t, rec); err != nil {
		return err
	}
	pipe, err := NewPipeline(cfg, nil, log)
	if err != nil {
		return err
	}
	// The repository's .redfix.yaml, as a worker reads it: its test
	// settings reach the reproduction and the bisection too.
	pol, err := clonePolicy(ctx, cfg, log, abs, head, func(s string) {
		sayTo(stdout)(s)
		rec.Note("%s", s)
	})
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	// As triage's tasks do: the pull request's evidence shows them.
	t.TestSettings = pol.Tests.String()
	v, err := reproduceForRepair(ctx, cfg, log, abs, head, blame, good, tests, reruns, pol.Tests, stdout)
	if err != nil {
		return err
	}
	if err := takeReproduction(v, &t, tests, stdout); err != nil {
		return err
	}
	rec.Task = &t
	if blame == "" {
		noteBisection(ctx, repo, v, &t, rec, stdout)
	}

	return repairTask(ctx, pipe, t, rec, stdout, stderr)
}

// resolveRepairRevs resolves --blame into the task t's bisection (noted in
// the report of the attempt) and returns --good resolved.
func resolveRepairRevs(ctx context.Context, repo gitrepo.Repo, blame, good string, t *task.Task, rec *worker.RepairReport) (string, error) {
	if blame != "" {
		sha, err := repo.Resolve(ctx, blame)
		if err != nil {
			return "", fmt.Errorf("repair: --blame: %w", err)
		}
		c, err := repo.Show(ctx, sha)
		if err != nil {
			return "", err
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: t.Commit, Subject: c.Subject, Author: c.Author}
		rec.Note("blame: %s %q (given with --blame)", task.Short(sha), c.Subject)
	}
	if good == "" {
		return "", nil
	}
	sha, err := repo.Resolve(ctx, good)
	if err != nil {
		return "", fmt.Errorf("repair: --good: %w", err)
	}
	return sha, nil
}

// takeReproduction prints each test's runs at HEAD and takes those that
// failed, and their evidence, into the task t: an error when none failed.
func takeReproduction(v triage.Verdict, t *task.Task, tests []string, stdout io.Writer) error {
	var failures []task.Failure
	for _, e := range v.Evidence {
		if e.Failure != nil {
			failures = append(failures, *e.Failure)
		}
		fmt.Fprintf(stdout, "  %s: failed %d of %d runs (%s)\n", e.Test, e.Failures, e.Runs, e.Verdict())
	}
	if len(failures) == 0 {
		return fmt.Errorf("repair: %s passes at %s (%d runs): nothing to repair", strings.Join(tests, ", "), task.Short(t.Commit), v.Flakiness.Runs)
	}
	t.Failures = failures
	t.Fingerprint = triage.Fingerprint(t.Repo, failures[0])
	t.Flakiness = v.Flakiness
	t.FlakinessByTest = triage.ByTest(v.Evidence)
	return nil
}

// reproduceForRepair reproduces the tests at head in a clone of the
// repository at abs, as triage does (every test re-run, each with its own
// evidence), through the driver chosen from the clone; without blame it
// bisects too, from good, or probing back from head for a commit where
// they pass.
func reproduceForRepair(ctx context.Context, cfg config.Config, log *zap.Logger, abs, head, blame, good string, tests []string, reruns int, settings testenv.Settings, stdout io.Writer) (triage.Verdict, error) {
	what := "reproducing"
	switch {
	case blame == "" && good != "":
		what = "reproducing and bisecting from " + task.Short(good) + " (--good)"
	case blame == "":
		what = "reproducing and bisecting (no --blame: probing back from HEAD for a commit where the tests pass)"
	}
	fmt.Fprintf(stdout, "%s %s at %s …\n", what, strings.Join(tests, ", "), task.Short(head))
	all, err := languages(cfg, log)
	if err != nil {
		return triage.Verdict{}, err
	}
	drivers := withTests(all, settings)
	if blame == "" {
		v, err := triage.Investigate(ctx, drivers, bisect.Bisector{}, abs, good, head, tests, reruns)
		if err != nil {
			return v, fmt.Errorf("reproduce and bisect: %w", err)
		}
		return v, nil
	}
	return triage.ReproduceAt(ctx, drivers, abs, head, tests, reruns)
}

// noteBisection says, on stdout and in the report of the attempt, what the
// bisection found, and takes its blame commit into the task t.
func noteBisection(ctx context.Context, repo gitrepo.Repo, v triage.Verdict, t *task.Task, rec *worker.RepairReport, stdout io.Writer) {
	switch {
	case v.Bisection != nil && v.Bisection.Blame != "":
		t.Bisection = *v.Bisection
		c, err := repo.Show(ctx, t.Bisection.Blame)
		if err == nil {
			t.Bisection.Subject, t.Bisection.Author = c.Subject, c.Author
		}
		fmt.Fprintf(stdout, "blame: %s %q, found by bisection (%d commits tested; passes at %s)\n",
			task.Short(t.Bisection.Blame), t.Bisection.Subject, t.Bisection.Steps, task.Short(t.Bisection.Good))
		rec.Note("blame: %s %q, found by bisection (%d commits tested; the tests pass at %s)",
			task.Short(t.Bisection.Blame), t.Bisection.Subject, t.Bisection.Steps, task.Short(t.Bisection.Good))
	case v.Flakiness.Verdict != triage.VerdictReliable:
		fmt.Fprintf(stdout, "no bisection: the failure is %s (%d of %d runs failed)\n", v.Flakiness.Verdict, v.Flakiness.Failures, v.Flakiness.Runs)
		rec.Note("no bisection: the failure is %s (%d of %d runs failed)", v.Flakiness.Verdict, v.Flakiness.Failures, v.Flakiness.Runs)
	default:
		fmt.Fprintf(stdout, "no blame commit: %s\n", clip.OneLine(v.BisectError, 200))
		rec.Note("no blame commit: %s", v.BisectError)
	}
}

// repairTask runs the pipeline on the task t, reproduced, as a worker
// would, prints its stages and how it stopped, and writes the report of
// the attempt.
func repairTask(ctx context.Context, pipe *worker.Pipeline, t task.Task, rec *worker.RepairReport, stdout, stderr io.Writer) error {
	p := &stagePrinter{w: stdout, t0: time.Now()}
	pipe.Progress = func(stage, detail string) { p.print(stage, "%s", detail) }
	o, err := pipe.Repair(ctx, t)
	rec.Outcome, rec.Err = &o, err
	if werr := rec.Write(); werr != nil {
		fmt.Fprintf(stderr, "repair: could not write the report of the attempt: %s\n", termsafe.String(werr.Error()))
	} else {
		fmt.Fprintf(stdout, "report of the attempt: %s\n", rec.Dir)
	}
	if err != nil {
		fmt.Fprintf(stdout, "stopped: %s\n", clip.OneLine(err.Error(), 300))
		return fmt.Errorf("repair: %s (the whole error is in %s)", clip.OneLine(err.Error(), 300), filepath.Join(rec.Dir, "report.md"))
	}
	if o.Status != task.StatusPublished {
		fmt.Fprintf(stdout, "stopped: %s\n", worker.StopLine(o))
		return fmt.Errorf("%w: %s", ErrNoPatch, worker.StopLine(o))
	}
	fmt.Fprintf(stdout, "stopped: published %s\n", strings.TrimPrefix(o.PullRequest, "file://"))
	fmt.Fprintf(stdout, "pull request: %s\n", strings.TrimPrefix(o.PullRequest, "file://"))
	return nil
}

// configuredLanguages chooses a driver as its Languages do and gives it the
// repository's test settings (lang.Configure), as triage and the workers
// do with the repository's policy.
type configuredLanguages struct {
	triage.Languages
	tests testenv.Settings
}

func (c configuredLanguages) For(repo, dir string) (lang.Driver, error) {
	d, err := c.Languages.For(repo, dir)
	if err != nil {
		return nil, err
	}
	return lang.Configure(d, c.tests)
}
