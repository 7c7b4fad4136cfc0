package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/triage"
)

// Mine is `worker mine`: past bug fixes of a local clone whose tests fail
// without them, written as tasks for `worker bench`.
func Mine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		o        bench.MineOptions
		demoTask bool
	)
	fs := newCommandLine("mine", stderr, os.Getenv)
	fs.StringVar(&o.Repo, "repo", ".", "the local clone whose history is mined")
	fs.StringVar(&o.Head, "head", "HEAD", "the newest commit to look at")
	fs.StringVar(&o.Since, "since", "", "the oldest history to look at: a revision (exclusive) or a date (2024-01-31, \"6 months ago\")")
	fs.IntVar(&o.Max, "max", 0, "stop after running the tests of this many commits that change code and tests together, earlier runs' included (0: no bound)")
	fs.IntVar(&o.MaxLines, "max-lines", 200, "skip fixes that change more non-test lines than this")
	fs.IntVar(&o.Runs, "runs", 3, "runs at least of each test with the fix and without it; a test that fails only in some is left out as flaky")
	fs.Float64Var(&o.FlakeRate, "flake-rate", bench.DefaultFlakeRate, "a test failing this share of its runs is the flake guarded against: see --flake-error")
	fs.Float64Var(&o.FlakeError, "flake-error", bench.DefaultFlakeError, "the chance at most that a test failing --flake-rate of its runs is taken for steady: a test with one outcome in every run runs again until that holds")
	fs.StringVar(&o.Out, "out", "", "the tasks file (JSON lines) to append to; its state file is OUT.state.jsonl")
	fs.BoolVar(&demoTask, "demo", false, "instead of mining, build the demo's sample repository in OUT.repo and write its failure as the one task of OUT")
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if o.Out == "" {
		return Usage("mine: --out is required")
	}
	if o.Max < 0 || o.MaxLines < 1 || o.Runs < 2 {
		return Usage("mine: --max must be at least 0, --max-lines at least 1, --runs at least 2")
	}
	if o.FlakeRate <= 0 || o.FlakeRate >= 1 || o.FlakeError <= 0 || o.FlakeError >= 1 {
		return Usage("mine: --flake-rate and --flake-error must be between 0 and 1")
	}
	defer limitMemory(cfg, log)()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if demoTask {
		return writeDemoTask(ctx, cfg, o.Out, termsafe.NewWriter(stdout))
	}
	abs, err := filepath.Abs(o.Repo)
	if err != nil {
		return err
	}
	o.Repo = abs
	if !sbox.Confined {
		fmt.Fprintf(stderr, "mine: the repository's tests run UNCONFINED: %s\n", sbox)
	}
	ctx = sandbox.WithRepo(ctx, abs)
	langs, err := languages(cfg, log)
	if err != nil {
		return err
	}
	o.Languages = langs
	o.Progress = bench.NewProgress(stdout, "commits")
	o.Log = log
	started := time.Now()
	sum, err := bench.Mine(ctx, o)
	fmt.Fprintf(termsafe.NewWriter(stdout), "\n%s\n", sum.Report(o, time.Since(started)))
	return err
}

// writeDemoTask builds the demo's sample repository in out.repo (unless it
// is there) and writes its failure, as CI reports it at the sample's head,
// as the one task of out.
func writeDemoTask(ctx context.Context, cfg config.Config, out string, stdout io.Writer) error {
	dir, err := filepath.Abs(out + ".repo")
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("mine --demo: %s exists; remove it (and %s) to write the demo's task again", dir, out)
	}
	sample, err := demo.Build(ctx, dir)
	if err != nil {
		return err
	}
	rep, err := report.Parse(sample.Report)
	if err != nil {
		return fmt.Errorf("sample CI report: %w", err)
	}
	t := bench.Task{ID: "demo", Repo: dir, Base: sample.Head, Subject: "the demo's failure (no golden fix)"}
	for _, f := range rep.Failures {
		t.Tests = append(t.Tests, f.ID())
	}
	// The blame commit, found as triage finds it for the bot: re-runs at
	// the head and the bisection from CI's last green commit.
	drivers, err := languages(cfg, nil)
	if err != nil {
		return err
	}
	v, err := triage.Investigate(ctx, drivers, bisect.Bisector{}, dir, sample.Good, sample.Head, t.Tests, triage.DefaultReruns)
	if err != nil {
		return fmt.Errorf("mine --demo: bisect the demo's failure: %w", err)
	}
	if v.Bisection != nil {
		t.Blame = v.Bisection.Blame
	}
	if err := bench.WriteTasks(out, []bench.Task{t}); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "the demo's sample repository is in %s; its failure (%s) is the task in %s\n", dir, strings.Join(t.Tests, ", "), out)
	return err
}
