package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// SimCase is one kind of simulated history for the bisection benchmark.
type SimCase struct {
	Commits   int     // positions 1..Commits after good
	FlakeRate float64 // how often the test fails before the culprit
	// Added puts the test's creation after good: before it the test does
	// not exist (it passes, as a runner asked for it there does); a third of the
	// time the commit that adds it is the culprit.
	Added bool
	// Reproduce is how many times triage re-ran the test at bad before
	// the search: their results are the search's known results at bad,
	// and they count in its runs. Plain bisection takes bad on trust.
	Reproduce int
	// Evidence, when set, is the search's NoisySearch.Evidence, and TopUp
	// the re-runs at bad triage makes when the search names no culprit
	// (counted in the search's runs): triage's plan when the re-runs are
	// split around the bisection.
	Evidence float64
	TopUp    int
}

// SimRow is what both searches did on one case's histories.
type SimRow struct {
	SimCase
	Trials int
	// Noisy is the Bayesian search; Binary is plain bisection (one run a
	// commit, good and bad taken on trust, like `git bisect run`).
	NoisyRight, BinaryRight int
	// NoisyRuns counts the reproduction's runs too; ReproRuns only them.
	NoisyRuns, BinaryRuns       int
	ReproRuns                   int
	NoisyConfidence             float64 // mean reported confidence
	NoisyFlakesOnly, NoisyUndec int     // findings that named no culprit
}

// simHistory is one simulated history: the culprit's position, where the
// test appears, and a seeded source of flakes.
type simHistory struct {
	n, culprit, added int
	flake             float64
	rng               *rand.Rand
}

func (h *simHistory) run(i int) Result {
	switch {
	case i < h.added:
		return ResultMissing
	case i >= h.culprit:
		return ResultFail
	case h.rng.Float64() < h.flake:
		return ResultFail
	}
	return ResultPass
}

func newSimHistory(c SimCase, seed uint64, trial int) (culprit, added int) {
	rng := rand.New(rand.NewPCG(seed, uint64(trial)))
	culprit = 1 + rng.IntN(c.Commits)
	added = 0
	if c.Added {
		if rng.IntN(3) == 0 {
			added = culprit
		} else {
			added = 1 + rng.IntN(culprit)
		}
	}
	return culprit, added
}

// binarySearch is plain bisection: one run a commit, good and bad trusted.
func binarySearch(n int, run func(int) Result) (culprit, runs int) {
	lo, hi := 0, n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		runs++
		if run(mid) == ResultFail {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, runs
}

// SimulateBisection runs the noisy search s and plain bisection on the same
// seeded histories of each case: the same culprits, the same creation of
// the test, the same flake draws in the same order. Test outcomes are
// simulated; the search is the code that bisects real repositories. onRow,
// when set, hears each case's row as it is done.
func SimulateBisection(ctx context.Context, s NoisySearch, cases []SimCase, trials int, seed uint64, onRow func(SimRow)) ([]SimRow, error) {
	var rows []SimRow
	for ci, c := range cases {
		row := SimRow{SimCase: c, Trials: trials}
		caseSeed := seed + uint64(ci)*1_000_003
		for t := 0; t < trials; t++ {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
			culprit, added := newSimHistory(c, caseSeed, t)
			h := &simHistory{n: c.Commits, culprit: culprit, added: added, flake: c.FlakeRate, rng: rand.New(rand.NewPCG(caseSeed^0x5eed, uint64(t)))}
			got, runs := binarySearch(c.Commits, h.run)
			row.BinaryRuns += runs
			if got == culprit {
				row.BinaryRight++
			}

			h.rng = rand.New(rand.NewPCG(caseSeed^0x5eed, uint64(t)))
			known := make([][]Result, c.Commits+1)
			for range c.Reproduce {
				known[c.Commits] = append(known[c.Commits], h.run(c.Commits))
			}
			cs := s
			if c.Evidence > 0 {
				cs.Evidence = c.Evidence
			}
			f, err := cs.Search(ctx, c.Commits, known, ProberFunc(func(_ context.Context, i int) ([]Result, error) {
				return []Result{h.run(i)}, nil
			}))
			if err != nil {
				return rows, fmt.Errorf("simulated search %d of %+v: %w", t, c, err)
			}
			if f.Kind != FindingCulprit {
				row.NoisyRuns += c.TopUp
			}
			row.NoisyRuns += f.Runs + c.Reproduce
			row.ReproRuns += c.Reproduce
			row.NoisyConfidence += f.Confidence
			switch f.Kind {
			case FindingCulprit:
				if f.Culprit == culprit {
					row.NoisyRight++
				}
			case FindingOnlyFlakes:
				row.NoisyFlakesOnly++
			case FindingUndecided:
				row.NoisyUndec++
			}
		}
		rows = append(rows, row)
		if onRow != nil {
			onRow(row)
		}
	}
	return rows, nil
}

// SimCases are the benchmark's histories: 64, 256 and 1024 commits; flake
// rates of 0, 5, 10 and 20%; the test present at good, or added after it;
// reproduce re-runs at bad before each search, and the search's evidence
// and the re-runs after it as in SimCase.
func SimCases(reproduce int, evidence float64, topUp int) []SimCase {
	var cs []SimCase
	for _, n := range []int{64, 256, 1024} {
		for _, added := range []bool{false, true} {
			for _, f := range []float64{0, 0.05, 0.10, 0.20} {
				cs = append(cs, SimCase{Commits: n, FlakeRate: f, Added: added, Reproduce: reproduce, Evidence: evidence, TopUp: topUp})
			}
		}
	}
	return cs
}

// SimSummary is what the rows of one flake rate add up to.
type SimSummary struct {
	FlakeRate float64
	Trials    int
	Right     int
	// RightLow is the lower end of the 95% interval (Wilson's) of the
	// share right.
	RightLow float64
	// NoisyRuns (reproduction included) and BinaryRuns are means.
	NoisyRuns, ReproRuns, BinaryRuns float64
}

// Summarize adds up the rows of the flake rate f.
func Summarize(rows []SimRow, f float64) SimSummary {
	s := SimSummary{FlakeRate: f}
	var noisy, repro, binary int
	for _, r := range rows {
		if r.FlakeRate != f {
			continue
		}
		s.Trials += r.Trials
		s.Right += r.NoisyRight
		noisy += r.NoisyRuns
		repro += r.ReproRuns
		binary += r.BinaryRuns
	}
	if s.Trials == 0 {
		return s
	}
	t := float64(s.Trials)
	s.NoisyRuns, s.ReproRuns, s.BinaryRuns = float64(noisy)/t, float64(repro)/t, float64(binary)/t
	s.RightLow = wilsonLow(s.Right, s.Trials)
	return s
}

// wilsonLow is the lower end of the 95% Wilson interval of k successes in
// n trials.
func wilsonLow(k, n int) float64 {
	const z = 1.959964
	p, nf := float64(k)/float64(n), float64(n)
	centre := p + z*z/(2*nf)
	spread := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return (centre - spread) / (1 + z*z/nf)
}

// WriteSimSummary prints s as one sentence.
func WriteSimSummary(w io.Writer, s SimSummary) error {
	ratio := 0.0
	if s.BinaryRuns > 0 {
		ratio = s.NoisyRuns / s.BinaryRuns
	}
	_, err := fmt.Fprintf(w, "At %.0f%% flakes: right in %d of %d histories (%.2f%%; at least %.2f%% at 95%% confidence); mean runs %.1f (%.1f of them reproducing at bad) against plain bisection's %.1f: %.2f×.\n",
		100*s.FlakeRate, s.Right, s.Trials, 100*float64(s.Right)/float64(max(s.Trials, 1)), 100*s.RightLow, s.NoisyRuns, s.ReproRuns, s.BinaryRuns, ratio)
	return err
}

// WriteSimTable prints the rows as a Markdown table.
func WriteSimTable(w io.Writer, rows []SimRow) error {
	if _, err := fmt.Fprintln(w, "| commits | flakes | test added after good | trials | noisy: right | noisy: mean runs | of them reproducing | noisy: no culprit named | binary: right | binary: mean runs | runs, noisy/binary |\n|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|"); err != nil {
		return err
	}
	for _, r := range rows {
		t := float64(r.Trials)
		added := "no"
		if r.Added {
			added = "yes"
		}
		ratio := 0.0
		if r.BinaryRuns > 0 {
			ratio = float64(r.NoisyRuns) / float64(r.BinaryRuns)
		}
		if _, err := fmt.Fprintf(w, "| %d | %.0f%% | %s | %d | %.1f%% | %.1f | %.1f | %d | %.1f%% | %.1f | %.2f× |\n",
			r.Commits, r.FlakeRate*100, added, r.Trials,
			100*float64(r.NoisyRight)/t, float64(r.NoisyRuns)/t, float64(r.ReproRuns)/t, r.NoisyFlakesOnly+r.NoisyUndec,
			100*float64(r.BinaryRight)/t, float64(r.BinaryRuns)/t, ratio); err != nil {
			return err
		}
	}
	return nil
}

// FlakyRow is what triage's reproduction and the noisy search did with a
// test that has no culprit: it fails Rate of its runs at every commit.
type FlakyRow struct {
	Commits          int
	Rate             float64
	Reproduce, TopUp int
	Trials           int
	// Dropped is how many passed at least once in the reproduction at bad
	// (triage calls them flaky and never bisects them); the rest were
	// searched.
	Dropped int
	// Named counts the searches that named a culprit anyway: the error the
	// search's Evidence bounds. NoCulprit is the others; DroppedAfter
	// those of them that the re-runs after the search found flaky.
	Named, NoCulprit, DroppedAfter int
	// Runs counts every run, the reproduction's included.
	Runs int
}

// SimulateFlakyEverywhere runs triage's plan — reproduce runs at bad (a
// pass among them drops the test), the search s, and topUp more runs at bad
// when it names no culprit (a pass among them drops the test) — on trials
// seeded histories of a test that fails rate of its runs at every commit.
func SimulateFlakyEverywhere(ctx context.Context, s NoisySearch, commits int, rate float64, reproduce, topUp, trials int, seed uint64) (FlakyRow, error) {
	row := FlakyRow{Commits: commits, Rate: rate, Reproduce: reproduce, TopUp: topUp, Trials: trials}
	for t := 0; t < trials; t++ {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		rng := rand.New(rand.NewPCG(seed^0xf1a4e, uint64(t)))
		run := func() Result {
			if rng.Float64() < rate {
				return ResultFail
			}
			return ResultPass
		}
		known := make([][]Result, commits+1)
		dropped := false
		for range reproduce {
			r := run()
			row.Runs++
			known[commits] = append(known[commits], r)
			dropped = dropped || r == ResultPass
		}
		if dropped {
			row.Dropped++
			continue
		}
		f, err := s.Search(ctx, commits, known, ProberFunc(func(context.Context, int) ([]Result, error) {
			return []Result{run()}, nil
		}))
		if err != nil && !errors.Is(err, errNoProgress) {
			return row, fmt.Errorf("simulated search %d of a test flaky everywhere: %w", t, err)
		}
		row.Runs += f.Runs
		if f.Kind == FindingCulprit {
			row.Named++
			continue
		}
		row.NoCulprit++
		for range topUp {
			row.Runs++
			if run() == ResultPass {
				row.DroppedAfter++
				break
			}
		}
	}
	return row, nil
}

// WriteFlakyRow prints r as one sentence.
func WriteFlakyRow(w io.Writer, r FlakyRow) error {
	searched := r.Trials - r.Dropped
	_, err := fmt.Fprintf(w, "A test failing %.0f%% of its runs at every commit (%d commits, %d trials): dropped as flaky by the %d re-runs at bad in %d; searched in %d, a culprit named in %d (%.2f%% of all), %d dropped as flaky by the %d re-runs after the search; mean runs %.1f.\n",
		100*r.Rate, r.Commits, r.Trials, r.Reproduce, r.Dropped, searched, r.Named,
		100*float64(r.Named)/float64(max(r.Trials, 1)), r.DroppedAfter, r.TopUp, float64(r.Runs)/float64(max(r.Trials, 1)))
	return err
}
