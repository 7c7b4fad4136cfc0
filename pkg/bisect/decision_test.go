package bisect

import (
	"context"
	"math"
	"strings"
	"testing"
)

// noProbe is a prober the search must not call: the known results decide.
func noProbe(t *testing.T) Prober {
	return ProberFunc(func(_ context.Context, i int) ([]Result, error) {
		t.Errorf("the search ran the test at %d, though what it knew decided", i)
		return []Result{ResultPass}, nil
	})
}

func repeat(r Result, n int) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// One pass just before the culprit rules the commits before it out: the
// search stops without running that commit again.
func TestOnePassBeforeTheCulpritDecides(t *testing.T) {
	t.Parallel()
	known := make([][]Result, 9)
	known[0] = []Result{ResultPass}
	known[3] = []Result{ResultPass}
	known[4] = repeat(ResultFail, 4)
	known[8] = repeat(ResultFail, 5)
	f, err := NoisySearch{}.Search(context.Background(), 8, known, noProbe(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != FindingCulprit || f.Culprit != 4 || f.Runs != 0 || f.Known != 11 {
		t.Fatalf("finding %+v, want culprit 4 from the known results alone", f)
	}
}

// The reproduction's runs at bad are evidence: with the commit before bad
// passing, five failures at bad name bad at once; one failure there does
// not (a flake of a test failing 30% of the time is not ruled out).
func TestReproductionRunsAtBadCount(t *testing.T) {
	t.Parallel()
	known := make([][]Result, 5)
	known[0] = []Result{ResultPass}
	known[3] = []Result{ResultPass}
	known[4] = repeat(ResultFail, 5)
	f, err := NoisySearch{}.Search(context.Background(), 4, known, noProbe(t))
	if err != nil || f.Kind != FindingCulprit || f.Culprit != 4 || f.Runs != 0 {
		t.Fatalf("five failures at bad: %+v, %v", f, err)
	}

	known[4] = []Result{ResultFail}
	h := newHistory(4, 0, 1)
	f, err = NoisySearch{}.Search(context.Background(), 4, known, h)
	if err != nil || f.Kind != FindingCulprit || f.Culprit != 4 {
		t.Fatalf("one failure at bad: %+v, %v", f, err)
	}
	if f.Runs == 0 || h.runs[0] != 4 {
		t.Errorf("one failure at bad decided it, or the search ran elsewhere first: runs at %v", h.runs)
	}
}

// The next probe is the commit whose result is expected to tell most: the
// middle of a range nothing is known of, then the middle of what is left.
func TestNextProbeByExpectedInformation(t *testing.T) {
	t.Parallel()
	po := NoisySearch{}.newPosterior(64)
	first := po.pick(1)
	if len(first) != 1 || first[0] < 28 || first[0] > 36 {
		t.Fatalf("first probe %v, want near the middle of 0..64", first)
	}
	po.observe(first[0], ResultPass)
	next := po.pick(1)
	if len(next) != 1 || next[0] <= first[0] || next[0] > first[0]+(64-first[0])*3/4 {
		t.Fatalf("after a pass at %d the next probe is %v, want inside the upper part", first[0], next)
	}
	// A failure is weak evidence (it may be a flake): after one at the
	// middle the search does not act as if the upper half were gone.
	po = NoisySearch{}.newPosterior(64)
	po.observe(32, ResultFail)
	a, _ := po.marginals()
	var upper float64
	for h := 33; h <= 64; h++ {
		upper += a[h]
	}
	if upper < 0.02 || upper > 0.2 {
		t.Errorf("after one failure at 32 the upper half holds %.3f, want a flake's share", upper)
	}
}

// On seeded histories of 64 commits whose test flakes one run in ten, the
// search (two re-runs at bad before it, evidence 32 asked of its culprit,
// as triage runs it) names the culprit in at least 99 of 100, and its own
// runs stay within twice plain bisection's. The figures are the same on
// every run.
func TestSimulationAtTenPercentFlakes(t *testing.T) {
	t.Parallel()
	cases := []SimCase{{Commits: 64, FlakeRate: 0.1, Reproduce: 2, Evidence: 32, TopUp: 5}}
	run := func() SimSummary {
		rows, err := SimulateBisection(context.Background(), NoisySearch{}, cases, 300, 22, nil)
		if err != nil {
			t.Fatal(err)
		}
		return Summarize(rows, 0.1)
	}
	s := run()
	if s.Trials != 300 || float64(s.Right) < 0.99*300 {
		t.Errorf("right in %d of %d", s.Right, s.Trials)
	}
	if own := s.NoisyRuns - s.ReproRuns; own > 2*s.BinaryRuns || s.ReproRuns != 2 {
		t.Errorf("the search's own runs: %.2f (reproduction %.1f), plain bisection's %.2f", own, s.ReproRuns, s.BinaryRuns)
	}
	if again := run(); again != s {
		t.Errorf("the seeded simulation differs: %+v, then %+v", s, again)
	}
	var b strings.Builder
	if err := WriteSimSummary(&b, s); err != nil || !strings.Contains(b.String(), "At 10% flakes: right in") {
		t.Errorf("summary %q, %v", b.String(), err)
	}
}

func TestWilsonLow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k, n int
		want float64
	}{{1000, 1000, 0.99617}, {990, 1000, 0.98170}, {0, 10, 0}} {
		if got := wilsonLow(c.k, c.n); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("wilsonLow(%d, %d) = %.5f, want %.5f", c.k, c.n, got, c.want)
		}
	}
}
