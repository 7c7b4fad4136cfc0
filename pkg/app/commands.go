package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// common parses the flags every long-running command shares and loads the
// configuration and the logger.
func common(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, *zap.Logger, error) {
	return commonEnv(name, args, os.Getenv, stderr, extra)
}

// commonEnv is common with the environment read through getenv.
func commonEnv(name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, *zap.Logger, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", getenv("REDFIX_CONFIG"), "configuration file (also REDFIX_CONFIG)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return config.Config{}, nil, err
	}
	if fs.NArg() > 0 {
		return config.Config{}, nil, Usage(fmt.Sprintf("%s: unexpected arguments %q", name, fs.Args()))
	}
	cfg, err := config.Load(*cfgPath, getenv)
	if err != nil {
		return config.Config{}, nil, err
	}
	log, err := logger(cfg, stderr)
	if err != nil {
		return config.Config{}, nil, err
	}
	return cfg, log, nil
}

// Serve runs the triage service until ctx ends: the HTTP server and the
// triage loop. Shutdown is staged: the server stops taking requests, those
// in flight get the grace period, then the triage loop stops (a report it
// was triaging is redelivered to another instance).
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := common("serve", args, stderr, nil)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	sweep(cfg, log)
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer sys.Close()
	sys.SetSandbox(sbox)
	// Tasks stored before the task API's repository filter had its index.
	if n, err := sys.Store.IndexTasksByRepo(ctx); err != nil {
		log.Warn("index tasks by repository: the task API's repo filter misses tasks stored before this version", zap.Error(err))
	} else if n > 0 {
		log.Info("indexed the stored tasks by repository", zap.Int("tasks", n))
	}

	ln, err := listen(cfg, cfg.HTTP.Addr, log)
	if err != nil {
		return err
	}
	warnSecurity(cfg, log)
	srv := server.HTTPServer(sys.Handler(cfg), server.DefaultTimeouts)
	log.Info("bot serving", zap.String("addr", ln.Addr().String()), zap.String("nats", sys.NATSURL), zap.String("redis", sys.RedisAddr), zap.Bool("model", cfg.LLM.Enabled()), zap.String("sandbox", sbox.String()))

	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := sys.RunTriage(work, cfg, nil); err != nil {
			errc <- fmt.Errorf("triage loop: %w", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		sys.RunRetention(work, cfg)
	}()
	if rs := sys.Resync(cfg); rs != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = rs.Run(work, cfg.GitHub.ResyncInterval)
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case runErr = <-errc:
		log.Error("stopping", zap.Error(runErr))
	}
	grace, cancel := context.WithTimeout(context.Background(), cfg.HTTP.GracePeriod)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		log.Warn("http shutdown", zap.Error(err))
	}
	stopWork()
	wg.Wait()
	return runErr
}

// WorkerRun consumes repair jobs until ctx ends. A job in flight when ctx
// ends is handed back to the queue for another worker.
func WorkerRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := common("run", args, stderr, nil)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if cfg.NATS.URL == "" || cfg.Redis.Addr == "" {
		return Usage("worker run needs a NATS server and a Redis (nats.url, redis.addr or REDFIX_NATS_URL, REDFIX_REDIS_ADDR); `bot demo` runs everything in one process")
	}
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	sweep(cfg, log)
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer sys.Close()
	sys.SetSandbox(sbox)
	pipe, err := sys.NewPipeline(cfg)
	if err != nil {
		return err
	}
	if cfg.Worker.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.Worker.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Worker.MetricsAddr, err)
		}
		srv := &http.Server{Handler: sys.OpsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.Info("worker metrics", zap.String("addr", ln.Addr().String()))
	}
	log.Info("worker consuming", zap.Int("slots", cfg.Worker.Slots), zap.String("policy", pipe.Policy), zap.String("sandbox", sbox.String()))
	return sys.RunWorker(ctx, cfg, pipe)
}

// sweep removes the workspaces a killed bot or worker left in the data
// directory (those of live processes sharing it are kept).
func sweep(cfg config.Config, log *zap.Logger) {
	removed, err := workspace.Sweep(filepath.Join(cfg.DataDir, "workspaces"))
	if err != nil {
		log.Warn("sweep abandoned workspaces", zap.Error(err))
	}
	if len(removed) > 0 {
		log.Info("removed abandoned workspaces", zap.Strings("dirs", removed))
	}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// TriageCommand is `bot triage`: reproduce, flakiness re-runs and bisection
// on a local clone, without any server.
func TriageCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("triage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", ".", "the local clone")
	good := fs.String("good", "", "a commit where the test passes (default: probe back from --bad)")
	bad := fs.String("bad", "HEAD", "a commit where the test fails")
	var tests stringList
	fs.Var(&tests, "test", "the failing test, as reports name it or bare (TestParse/sub); repeatable")
	reruns := fs.Int("reruns", triage.DefaultReruns, "runs at the failing commit to tell reliable from flaky")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	confidence := fs.Float64("confidence", bisect.DefaultConfidence, "the posterior a culprit needs before bisection names it")
	parallel := fs.Int("parallel", 1, "commits bisection tests at once, each in a worktree of its own")
	maxRuns := fs.Int("max-runs", 0, "bound on bisection's test runs (0: from the range's length)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(tests) == 0 {
		return Usage("triage: --test is required")
	}
	if *confidence < 0.5 || *confidence >= 1 || *parallel < 1 || *maxRuns < 0 {
		return Usage("triage: --confidence must be in [0.5, 1), --parallel at least 1, --max-runs at least 0")
	}
	b := bisect.Bisector{Confidence: *confidence, Parallel: *parallel, MaxSteps: *maxRuns}
	cfg, err := config.Load(os.Getenv("REDFIX_CONFIG"), os.Getenv)
	if err != nil {
		return err
	}
	log, err := logger(cfg, stderr)
	if err != nil {
		return err
	}
	// Its workspace and parallel worktrees go in a directory of this run's.
	cleanup, err := cfg.RunDir("triage-", log)
	if err != nil {
		return err
	}
	defer cleanup()
	b.WorkDir = filepath.Join(cfg.DataDir, "workspaces")
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if !sbox.Confined {
		fmt.Fprintf(stderr, "triage: the tests run UNCONFINED: %s\n", sbox)
	}
	if abs, err := filepath.Abs(*repo); err == nil {
		ctx = sandbox.WithRepo(ctx, abs)
	}
	// Reproduction and bisection take a while: on a terminal, a line per
	// test run on stderr.
	b.Runner = triage.ReportRuns(nil, bench.StageLines(stderr))
	if cfg.Redis.Addr != "" {
		// The service's Redis: runs by commit are reused across searches
		// (and with the service), and this search's are kept.
		rdb := redisClient(cfg, cfg.Redis.Addr)
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("triage: redis at %s: %w", cfg.Redis.Addr, err)
		}
		b.Cache = store.New(rdb, cfg.Redis.Prefix)
	}
	v, err := triage.InvestigateWith(ctx, b, *repo, *good, *bad, tests, *reruns)
	if err != nil {
		return err
	}
	// The verdict holds the repository's text (test output, commit
	// subjects and authors): nothing in it may drive the terminal.
	if *asJSON {
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err = io.WriteString(termsafe.NewWriter(stdout), v.String())
	return err
}

// Repair is `worker repair`: the harness, the gates and the local publisher
// on a local clone whose HEAD fails the test. Without --blame it finds the
// commit that broke the test with triage's bisection, probing back from
// HEAD for a commit where the test passes. Whatever happens after the
// reproduction, it writes what it tried (report.md and trajectory.jsonl)
// under --out, and ends with one line saying why it stopped.
func Repair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		repoPath, blame, out string
		tests                stringList
		reruns               int
	)
	cfg, log, err := common("repair", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&repoPath, "repo", ".", "the local clone; its HEAD must fail the test")
		fs.Var(&tests, "test", "the failing test, as reports name it or bare (TestParse/sub); repeatable")
		fs.StringVar(&blame, "blame", "", "the commit that broke the test (default: found by bisection)")
		fs.StringVar(&out, "out", "", "directory for the pull request and the report of the attempt (default: REPO/../redfix-pull-requests)")
		fs.IntVar(&reruns, "reruns", triage.DefaultReruns, "runs at HEAD to tell a reliable failure from a flaky one")
	})
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if len(tests) == 0 {
		return Usage("repair: --test is required")
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

	if blame != "" {
		sha, err := repo.Resolve(ctx, blame)
		if err != nil {
			return fmt.Errorf("repair: --blame: %w", err)
		}
		c, err := repo.Show(ctx, sha)
		if err != nil {
			return err
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: head, Subject: c.Subject, Author: c.Author}
		rec.Note("blame: %s %q (given with --blame)", task.Short(sha), c.Subject)
	}
	// Reproduce at HEAD, in a clone, as triage does: every test re-run,
	// each with its own evidence.
	what := "reproducing"
	if blame == "" {
		what = "reproducing and bisecting (no --blame: probing back from HEAD for a commit where the tests pass)"
	}
	fmt.Fprintf(stdout, "%s %s at %s …\n", what, strings.Join(tests, ", "), task.Short(head))
	v, err := investigate(ctx, abs, head, tests, reruns, blame == "")
	if err != nil {
		return err
	}
	var failures []task.Failure
	for _, e := range v.Evidence {
		if e.Failure != nil {
			failures = append(failures, *e.Failure)
		}
		fmt.Fprintf(stdout, "  %s: failed %d of %d runs (%s)\n", e.Test, e.Failures, e.Runs, e.Verdict())
	}
	if len(failures) == 0 {
		return fmt.Errorf("repair: %s passes at %s (%d runs): nothing to repair", strings.Join(tests, ", "), task.Short(head), v.Flakiness.Runs)
	}
	t.Failures = failures
	t.Fingerprint = triage.Fingerprint(abs, failures[0])
	t.Flakiness = v.Flakiness
	t.FlakinessByTest = triage.ByTest(v.Evidence)
	rec.Task = &t
	if blame == "" {
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

	pipe, err := NewPipeline(cfg, nil, log)
	if err != nil {
		return err
	}
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

// investigate reproduces the tests at head in a clone, reruns times each,
// and, when bisect is set and they fail reliably, bisects them with triage's
// bisection, probing back for a commit where they pass.
func investigate(ctx context.Context, repo, head string, tests []string, reruns int, bisect bool) (triage.Verdict, error) {
	if bisect {
		v, err := triage.Investigate(ctx, repo, "", head, tests, reruns)
		if err != nil {
			return v, fmt.Errorf("reproduce and bisect: %w", err)
		}
		return v, nil
	}
	ws, err := workspace.Open(ctx, repo, head, "")
	if err != nil {
		return triage.Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	defer ws.Close()
	ids, err := testrun.Canonical(ws.Dir, tests)
	if err != nil {
		return triage.Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	rep, err := triage.Reproduce(ctx, testrun.Runner{}, ws.Dir, ids, reruns)
	if err != nil {
		return triage.Verdict{}, fmt.Errorf("reproduce: %w", err)
	}
	return triage.Verdict{Repo: repo, Commit: ws.Commit, Tests: ids, Flakiness: rep.Flakiness, Evidence: rep.Tests, TestRuns: rep.Flakiness.Runs}, nil
}
