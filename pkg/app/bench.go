package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/triage"
)

// Mine is `worker mine`: past bug fixes of a local clone whose tests fail
// without them, written as tasks for `worker bench`.
func Mine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		o        bench.MineOptions
		demoTask bool
	)
	cfg, log, err := common("mine", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.Repo, "repo", ".", "the local clone whose history is mined")
		fs.StringVar(&o.Head, "head", "HEAD", "the newest commit to look at")
		fs.StringVar(&o.Since, "since", "", "the oldest history to look at: a revision (exclusive) or a date (2024-01-31, \"6 months ago\")")
		fs.IntVar(&o.Max, "max", 0, "stop after running the tests of this many commits that change code and tests together, earlier runs' included (0: no bound)")
		fs.IntVar(&o.MaxLines, "max-lines", 200, "skip fixes that change more non-test lines than this")
		fs.IntVar(&o.Runs, "runs", 3, "runs of each test with the fix and without it; a test that fails only in some is left out as flaky")
		fs.StringVar(&o.Out, "out", "", "the tasks file (JSON lines) to append to; its state file is OUT.state.jsonl")
		fs.BoolVar(&demoTask, "demo", false, "instead of mining, build the demo's sample repository in OUT.repo and write its failure as the one task of OUT")
	})
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
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if demoTask {
		return writeDemoTask(ctx, o.Out, termsafe.NewWriter(stdout))
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
	o.Runner = testrun.Runner{Timeout: 10 * time.Minute}
	o.Progress = bench.NewProgress(stdout, "commits")
	o.Log = log
	started := time.Now()
	sum, err := bench.Mine(ctx, o)
	fmt.Fprintf(termsafe.NewWriter(stdout), "\n%s\n", mineSummary(sum, o, time.Since(started)))
	return err
}

// writeDemoTask builds the demo's sample repository in out.repo (unless it
// is there) and writes its failure, as CI reports it at the sample's head,
// as the one task of out.
func writeDemoTask(ctx context.Context, out string, stdout io.Writer) error {
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
	v, err := triage.Investigate(ctx, dir, sample.Good, sample.Head, t.Tests, triage.DefaultReruns)
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

// mineSummary is the mine's last lines: what it looked at, what qualified,
// and why the rest did not.
func mineSummary(s bench.MineSummary, o bench.MineOptions, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d commits on the first-parent line; %d run with tests; %d qualified (tasks in %s, reasons in %s); took %s",
		s.Commits, s.Examined, s.Qualified, o.Out, bench.StatePath(o.Out), took.Round(time.Second))
	if s.Resumed > 0 {
		fmt.Fprintf(&b, "; %d decided by an earlier run", s.Resumed)
	}
	var kinds []string
	for k := range s.Skipped {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		return s.Skipped[kinds[i]] > s.Skipped[kinds[j]] || s.Skipped[kinds[i]] == s.Skipped[kinds[j]] && kinds[i] < kinds[j]
	})
	if len(kinds) > 0 {
		b.WriteString("\nskipped:")
		for _, k := range kinds {
			fmt.Fprintf(&b, " %s %d;", k, s.Skipped[k])
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

// withheld is the bench's publisher: it records that the pipeline would
// have published, and publishes nothing.
type withheld struct{}

func (withheld) Publish(_ context.Context, pr publish.PullRequest) (string, error) {
	return "bench://withheld/" + pr.Task.ID, nil
}

// Bench is `worker bench`: every task of a tasks file replayed through the
// configured policy, gates and judge, without publishing, each patch scored
// on a clean copy; a table (or JSON) of the solve rates, the precision of
// what would have been published and the cost, and an HTML report.
func Bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		tasksPath, policy, results, htmlPath string
		k, jobs                              int
		asJSON                               bool
	)
	cfg, log, err := common("bench", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&tasksPath, "tasks", "", "the tasks file (JSON lines, as worker mine writes it)")
		fs.StringVar(&policy, "policy", "", "offline or llm (default: llm when a model is configured, else offline)")
		fs.IntVar(&k, "k", 1, "independent episodes per task: SR@k counts a task solved when one of them solves it")
		fs.IntVar(&jobs, "jobs", 1, "tasks replayed at once")
		fs.BoolVar(&asJSON, "json", false, "print the summary and every task's result as JSON")
		fs.StringVar(&htmlPath, "html", "", "write an HTML report with each episode's trajectory to this file")
		fs.StringVar(&results, "results", "", "the results file, appended to task by task; tasks already in it are not replayed (default: TASKS.POLICY.results.jsonl)")
	})
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if tasksPath == "" {
		return Usage("bench: --tasks is required")
	}
	if k < 1 || jobs < 1 {
		return Usage("bench: --k and --jobs must be at least 1")
	}
	switch policy {
	case "":
		policy = "offline"
		if cfg.LLM.Enabled() {
			policy = "llm"
		}
	case "offline":
		cfg.LLM = config.LLM{}
	case "llm":
		if !cfg.LLM.Enabled() {
			return Usage("bench: --policy llm needs a model (llm.model or REDFIX_MODEL, with its base URL and key)")
		}
	default:
		return Usage(fmt.Sprintf("bench: --policy %q: want offline or llm", policy))
	}
	tasks, err := bench.ReadTasksFile(tasksPath)
	if err != nil {
		return Usage(err.Error())
	}
	if len(tasks) == 0 {
		return Usage(fmt.Sprintf("bench: %s: %v", tasksPath, bench.ErrNoTasks))
	}
	name := "offline"
	if policy == "llm" {
		name = "llm-" + cfg.LLM.Model
	}
	if results == "" {
		results = strings.TrimSuffix(tasksPath, ".jsonl") + "." + safeFileName(name) + ".results.jsonl"
	}
	// Each episode is one of the k candidates the bot would run with
	// harness.samples = k: the same share of the budget, the same sampling
	// temperature.
	cfg.Harness.Samples = k
	cfg.Publish.Mode = "local"
	cleanup, err := cfg.RunDir("bench-", log)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if !sbox.Confined {
		fmt.Fprintf(stderr, "bench: the repositories' tests and the agent's commands run UNCONFINED: %s\n", sbox)
	}
	pipe, err := NewPipelineWith(cfg, nil, nil, log)
	if err != nil {
		return err
	}
	pipe.Publisher, pipe.Ledger, pipe.Checkouts = withheld{}, nil, nil
	pipe.Samples, pipe.Parallel = 1, 1

	progressTo := stdout
	if asJSON {
		progressTo = stderr
	}
	progress := bench.NewProgress(progressTo, "tasks")
	if bench.IsTerminal(progressTo) {
		// The repair's stages (agent rounds, gates) on the bar as they
		// happen; on lines for a log they would only repeat the results.
		pipe.Progress = func(stage, detail string) { progress.Step(stage + ": " + detail) }
	}
	r := &bench.Runner{
		Repairer: pipe, Policy: pipe.Policy, Tests: testrun.Runner{Timeout: 10 * time.Minute},
		K: k, Jobs: jobs, Results: results, WorkDir: filepath.Join(cfg.DataDir, "bench"),
		Progress: progress, Log: log,
	}
	res, runErr := r.Run(ctx, tasks)
	sum := bench.Summarize(pipe.Policy, k, res)
	// Task IDs, subjects and errors are the repositories' text.
	if asJSON {
		if err := bench.WriteJSON(termsafe.NewJSONWriter(stdout), res, sum); err != nil {
			return err
		}
	} else {
		text := termsafe.NewWriter(stdout)
		fmt.Fprintln(text)
		if err := bench.WriteTable(text, res, sum); err != nil {
			return err
		}
		fmt.Fprintf(text, "results: %s\n", results)
	}
	if htmlPath != "" {
		if err := bench.WriteHTML(htmlPath, filepath.Dir(results), res, tasks, sum); err != nil {
			return err
		}
		fmt.Fprintf(progressTo, "report: %s\n", htmlPath)
	}
	return runErr
}

// safeFileName keeps letters, digits, dots and dashes.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
