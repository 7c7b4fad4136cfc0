package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/bisect"
)

// BenchBisect is `bot bench-bisect`: the noisy bisection and plain
// bisection on the same simulated histories (64, 256 and 1024 commits;
// flake rates of 0 to 20%; the test present at good or added after it),
// printed as a Markdown table of accuracy and mean test runs.
func BenchBisect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-bisect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trials := fs.Int("trials", 1000, "histories per row")
	seed := fs.Uint64("seed", 1, "seed of the simulated histories")
	confidence := fs.Float64("confidence", bisect.DefaultConfidence, "the posterior a culprit needs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *trials < 1 || *confidence < 0.5 || *confidence >= 1 {
		return Usage("bench-bisect: --trials must be at least 1 and --confidence in [0.5, 1)")
	}
	start := time.Now()
	// On a terminal, a bar over the cases; nothing otherwise.
	cases := bisect.SimCases()
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
	_, err = fmt.Fprintf(stdout, "\n%d histories a row, seed %d, confidence %.3f; simulated in %s\n", *trials, *seed, *confidence, time.Since(start).Round(time.Second))
	return err
}
