package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/testrun"
)

// Mine is `worker mine`: past bug fixes of a local clone whose tests fail
// without them, written as tasks for `worker bench`.
func Mine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o bench.MineOptions
	cfg, log, err := common("mine", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.Repo, "repo", ".", "the local clone whose history is mined")
		fs.StringVar(&o.Head, "head", "HEAD", "the newest commit to look at")
		fs.StringVar(&o.Since, "since", "", "the oldest history to look at: a revision (exclusive) or a date (2024-01-31, \"6 months ago\")")
		fs.IntVar(&o.Max, "max", 0, "stop after running the tests of this many commits that change code and tests together, earlier runs' included (0: no bound)")
		fs.IntVar(&o.MaxLines, "max-lines", 200, "skip fixes that change more non-test lines than this")
		fs.IntVar(&o.Runs, "runs", 3, "runs of each test with the fix and without it; a test that fails only in some is left out as flaky")
		fs.StringVar(&o.Out, "out", "", "the tasks file (JSON lines) to append to; its state file is OUT.state.jsonl")
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
	abs, err := filepath.Abs(o.Repo)
	if err != nil {
		return err
	}
	o.Repo = abs
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	if !sbox.Confined {
		fmt.Fprintf(stderr, "mine: the repository's tests run UNCONFINED: %s\n", sbox)
	}
	ctx = sandbox.WithRepo(ctx, abs)
	o.Runner = testrun.Runner{Timeout: 10 * time.Minute}
	o.Progress = bench.NewProgress(stdout, "commits")
	o.Log = log
	started := time.Now()
	sum, err := bench.Mine(ctx, o)
	fmt.Fprintf(stdout, "\n%s\n", mineSummary(sum, o, time.Since(started)))
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
