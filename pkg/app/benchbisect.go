package app

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	reruns := fs.Int("reruns", triage.DefaultReruns, "triage's re-runs at bad that call a failure reliable, split as triage splits them: some before the search (known to it), the evidence of the rest asked of its culprit, the rest made when it names none; all counted in its runs")
	reproduce := fs.Int("reproduce", -1, "instead of --reruns' split: this many re-runs at bad before the search, none after, no evidence asked of it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *trials < 1 || *confidence < 0.5 || *confidence >= 1 || *reruns < 1 {
		return Usage("bench-bisect: --trials must be at least 1, --confidence in [0.5, 1) and --reruns at least 1")
	}
	first, evidence, topUp := triage.RerunPlan(*reruns, false)
	plan := fmt.Sprintf("%d re-runs at bad before the search, a culprit needing evidence %.0f to 1 against a test failing half its runs everywhere, %d more re-runs when it names none", first, evidence, topUp)
	if *reproduce >= 0 {
		first, evidence, topUp = *reproduce, 0, 0
		plan = fmt.Sprintf("%d re-runs at bad before the search", first)
	}
	start := time.Now()
	// On a terminal, a bar over the cases; nothing otherwise.
	cases := bisect.SimCases(first, evidence, topUp)
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
	fmt.Fprintln(stdout)
	for _, rate := range []float64{0.3, 0.5, 0.7} {
		r, err := bisect.SimulateFlakyEverywhere(ctx, bisect.NoisySearch{Confidence: *confidence, Evidence: evidence}, 256, rate, first, topUp, *trials, *seed)
		if err != nil {
			return err
		}
		if err := bisect.WriteFlakyRow(stdout, r); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(stdout, "\n%d histories a row, seed %d, confidence %.3f; %s; simulated in %s\n", *trials, *seed, *confidence, plan, time.Since(start).Round(time.Second))
	return err
}
