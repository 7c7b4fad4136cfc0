package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/triage"
)

// BenchBisect is `bot bench-bisect`: the noisy bisection and plain
// bisection on the same simulated histories (64, 256 and 1024 commits;
// flake rates of 0 to 20%; the test present at good or added after it),
// printed as a Markdown table of accuracy and mean test runs, the
// reproduction's runs at bad counted with the noisy search's, then a line a
// flake rate: the share right over all its histories, with its 95% lower
// bound, and the mean runs beside plain bisection's.
func BenchBisect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-bisect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trials := fs.Int("trials", 1000, "histories per row")
	seed := fs.Uint64("seed", 1, "seed of the simulated histories")
	confidence := fs.Float64("confidence", bisect.DefaultConfidence, "the posterior a culprit needs")
	reproduce := fs.Int("reproduce", bisect.FirstRuns, "re-runs at bad before the search (triage's first reproduction runs), known to the search and counted in its runs")
	reliable := fs.Int("reliable", triage.DefaultReruns, "failed runs of the broken code a reliable verdict needs: the search's runs at or after its culprit count, the rest are made at bad after it (at most --reproduce: a fixed reproduction before the search)")
	flakyTrials := fs.Int("flaky-trials", 2000, "histories of a test no commit broke, flaky everywhere, for the rate at which it is called reliable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *trials < 1 || *confidence < 0.5 || *confidence >= 1 || *reproduce < 0 || *reliable < 0 || *flakyTrials < 0 {
		return Usage("bench-bisect: --trials must be at least 1, --confidence in [0.5, 1), and --reproduce, --reliable and --flaky-trials at least 0")
	}
	start := time.Now()
	// On a terminal, a bar over the cases; nothing otherwise.
	cases := bisect.SimCases(*reproduce, *reliable)
	progress := bench.TerminalProgress(stderr, "cases")
	progress.Total(len(cases))
	onRow := func(r bisect.SimRow) {
		progress.Done(fmt.Sprintf("%d commits, flake rate %.0f%%, test added %v: noisy %d/%d right", r.Commits, 100*r.FlakeRate, r.Added, r.NoisyRight, r.Trials), true)
	}
	rows, err := bisect.SimulateBisection(ctx, bisect.NoisySearch{Confidence: *confidence}, cases, *trials, *seed, onRow)
	if bench.IsTerminal(stderr) {
		fmt.Fprintln(stderr) // end the bar's line
	}
	if err != nil {
		return err
	}
	if err := bisect.WriteSimTable(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, f := range []float64{0, 0.05, 0.10, 0.20} {
		if err := bisect.WriteSimSummary(stdout, bisect.Summarize(rows, f)); err != nil {
			return err
		}
	}
	if *flakyTrials > 0 {
		fmt.Fprintln(stdout)
		for _, q := range []float64{0.3, 0.5, 0.7} {
			called, err := bisect.SimulateFlakyVerdict(ctx, bisect.NoisySearch{Confidence: *confidence}, 64, q, *reproduce, *reliable, *flakyTrials, *seed)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "A test no commit broke, failing %.0f%% of runs everywhere (64 commits): called reliable in %d of %d (%.2f%%; %d fixed runs at bad would: %.2f%%).\n",
				100*q, called, *flakyTrials, 100*float64(called)/float64(*flakyTrials), max(*reproduce, *reliable), 100*math.Pow(q, float64(max(*reproduce, *reliable))))
		}
	}
	mode := fmt.Sprintf("%d reproduction runs at bad", *reproduce)
	if *reliable > *reproduce {
		mode = fmt.Sprintf("%d reproduction runs at bad before the search, up to %d failed runs of the broken code for a reliable verdict", *reproduce, *reliable)
	}
	_, err = fmt.Fprintf(stdout, "\n%d histories a row, seed %d, confidence %.3f, %s; simulated in %s\n", *trials, *seed, *confidence, mode, time.Since(start).Round(time.Second))
	return err
}
