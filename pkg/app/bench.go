package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

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
	fs := newCommandLine("bench", stderr, os.Getenv)
	fs.StringVar(&tasksPath, "tasks", "", "the tasks file (JSON lines, as worker mine writes it)")
	fs.StringVar(&policy, "policy", "", "offline or llm (default: llm when a model is configured, else offline)")
	fs.IntVar(&k, "k", 1, "independent episodes per task: SR@k counts a task solved when one of them solves it")
	fs.IntVar(&jobs, "jobs", 1, "tasks replayed at once")
	fs.BoolVar(&asJSON, "json", false, "print the summary and every task's result as JSON")
	fs.StringVar(&htmlPath, "html", "", "write an HTML report with each episode's trajectory to this file")
	fs.StringVar(&results, "results", "", "the results file, appended to task by task; tasks already in it are not replayed (default: TASKS.POLICY.results.jsonl)")
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg, log, err := fs.load(stderr)
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
	if policy, err = benchPolicy(&cfg, policy); err != nil {
		return err
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
		results = bench.ResultsPath(tasksPath, name)
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
	defer limitMemory(cfg, log)()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if !sbox.Confined {
		fmt.Fprintf(stderr, "bench: the repositories' tests and the agent's commands run UNCONFINED: %s\n", sbox)
	}
	progressTo := stdout
	if asJSON {
		progressTo = stderr
	}
	progress := bench.NewProgress(progressTo, "tasks")
	pipe, err := benchPipeline(cfg, log, progress, bench.IsTerminal(progressTo))
	if err != nil {
		return err
	}
	langs, err := languages(cfg, log)
	if err != nil {
		return err
	}
	r := &bench.Runner{
		Repairer: pipe, Policy: pipe.Policy, Languages: langs,
		K: k, Jobs: jobs, Results: results, WorkDir: filepath.Join(cfg.DataDir, "bench"),
		Bisector: benchBisector{langs: langs, reruns: cfg.Triage.Reruns},
		Progress: progress, Log: log,
	}
	res, runErr := r.Run(ctx, tasks)
	sum := bench.Summarize(pipe.Policy, k, res)
	if asJSON {
		// Task IDs, subjects and errors are the repositories' text.
		if err := bench.WriteJSON(termsafe.NewJSONWriter(stdout), res, sum); err != nil {
			return err
		}
	} else if err := writeBenchTable(stdout, res, sum, results); err != nil {
		return err
	}
	if htmlPath != "" {
		if err := bench.WriteHTML(htmlPath, filepath.Dir(results), res, tasks, sum); err != nil {
			return err
		}
		fmt.Fprintf(progressTo, "report: %s\n", htmlPath)
	}
	return runErr
}

// benchPipeline is the worker's pipeline as bench runs it: one episode at
// a time, nothing published (the patch is withheld for scoring), and on a
// terminal the repair's stages (agent rounds, gates) on the bar as they
// happen; on lines for a log they would only repeat the results.
func benchPipeline(cfg config.Config, log *zap.Logger, progress bench.Progress, terminal bool) (*worker.Pipeline, error) {
	pipe, err := NewPipelineWith(cfg, nil, nil, log)
	if err != nil {
		return nil, err
	}
	pipe.Publisher, pipe.Ledger, pipe.Checkouts = bench.Withheld{}, nil, nil
	pipe.Samples, pipe.Parallel = 1, 1
	if terminal {
		pipe.Progress = func(stage, detail string) { progress.Step(stage + ": " + detail) }
	}
	return pipe, nil
}

// benchPolicy is the policy bench runs, from --policy and whether cfg
// names a model: a usage error when llm is asked for without one. The
// offline policy runs with no model, the judge's included.
func benchPolicy(cfg *config.Config, policy string) (string, error) {
	switch policy {
	case "":
		if cfg.LLM.Enabled() {
			return "llm", nil
		}
		return "offline", nil
	case "offline":
		cfg.LLM = config.LLM{}
		return policy, nil
	case "llm":
		if !cfg.LLM.Enabled() {
			return "", Usage("bench: --policy llm needs a model (llm.model or REDFIX_MODEL, with its base URL and key)")
		}
		return policy, nil
	}
	return "", Usage(fmt.Sprintf("bench: --policy %q: want offline or llm", policy))
}

// writeBenchTable prints bench's results as a table, for a person (task
// IDs, subjects and errors are the repositories' text).
func writeBenchTable(stdout io.Writer, res []bench.Result, sum bench.Summary, results string) error {
	text := termsafe.NewWriter(stdout)
	fmt.Fprintln(text)
	if err := bench.WriteTable(text, res, sum); err != nil {
		return err
	}
	fmt.Fprintf(text, "results: %s\n", results)
	return nil
}

// benchBisector finds a bench task's blame from its good commit with
// triage's investigation: the tests reproduced at the bad commit, then
// bisected.
type benchBisector struct {
	langs  triage.Languages
	reruns int
}

func (b benchBisector) Bisect(ctx context.Context, repo, good, bad string, tests []string) (task.Bisection, error) {
	v, err := triage.Investigate(ctx, b.langs, bisect.Bisector{}, repo, good, bad, tests, b.reruns)
	if err != nil {
		return task.Bisection{}, err
	}
	if v.Bisection == nil || v.Bisection.Blame == "" {
		return task.Bisection{}, fmt.Errorf("no commit blamed: %s", v.BisectError)
	}
	return *v.Bisection, nil
}
