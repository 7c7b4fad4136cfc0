package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/triage"
)

// TriageCommand is `bot triage`: reproduce, flakiness re-runs and bisection
// on a local clone, without any server.
func TriageCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return triageCommand(ctx, args, os.Getenv, stdout, stderr)
}

// triageCommand is TriageCommand with the environment read through getenv.
func triageCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newCommandLine("triage", stderr, getenv)
	repo := fs.String("repo", ".", "the local clone")
	good := fs.String("good", "", "a commit where the test passes (default: probe back from --bad)")
	bad := fs.String("bad", "HEAD", "a commit where the test fails")
	var tests stringList
	fs.Var(&tests, "test", "the failing test, as reports name it or bare (TestParse/sub, tests/test_x.py::test_y, test_y); repeatable")
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
	cfg, log, err := fs.load(stderr)
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
	if cfg.Redis.External() {
		// The service's Redis: runs by commit are reused across searches
		// (and with the service), and this search's are kept.
		rdb := redisClient(cfg, cfg.Redis.Addr)
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("triage: redis at %s: %w", cfg.Redis.Describe(), err)
		}
		b.Cache = store.New(rdb, cfg.Redis.Prefix)
	}
	langs, err := languages(cfg, log)
	if err != nil {
		return err
	}
	// The clone's .redfix.yaml at the failing commit, as the service reads
	// it: every run has its test settings.
	abs, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	at, err := (gitrepo.Repo{Dir: abs}).Resolve(ctx, *bad)
	if err != nil {
		return fmt.Errorf("triage: --bad: %w", err)
	}
	pol, err := clonePolicy(ctx, cfg, log, abs, at, sayTo(termsafe.NewWriter(stderr)))
	if err != nil {
		return fmt.Errorf("triage: %w", err)
	}
	v, err := triage.Investigate(ctx, withTests(langs, pol.Tests), b, *repo, *good, *bad, tests, *reruns)
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
