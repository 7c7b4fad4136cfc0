package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Prober runs the tests once at the commit at position i of a first-parent
// range (0 is good, n is bad) and returns one result per test. The noisy
// search calls Probe concurrently when Parallel > 1.
type Prober interface {
	Probe(ctx context.Context, i int) ([]Result, error)
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context, i int) ([]Result, error)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, i int) ([]Result, error) { return f(ctx, i) }

// DefaultConfidence is NoisySearch's Confidence when it is not set.
const DefaultConfidence = 0.99

// NoisySearch finds the first failing commit of a first-parent range when
// every test run is noisy evidence: a test may fail at a commit before the
// culprit for a transient reason (a flake), and rarely pass after it.
//
// It keeps a posterior over hypotheses — "position k is the first failing
// commit" for k in 1..n, "the tests already fail at good" (k = 0), and "the
// range only shows flakes" — jointly with the flake rate, which it does not
// know and learns from the runs. Each next commit is the one whose run is
// expected to lower the posterior's entropy most (information gain), so
// where evidence is weak the same commit is run again. It stops once one
// hypothesis holds Confidence, or when MaxRuns runs are spent.
type NoisySearch struct {
	// Confidence to reach before naming a culprit; DefaultConfidence when 0.
	Confidence float64
	// MaxRuns bounds the probes; 0 is a bound from the range's length.
	MaxRuns int
	// Parallel is how many probes may run at once (separate worktrees);
	// 1 when 0.
	Parallel int
	// GoodPrior is the prior belief that the tests already fail at good;
	// 0.01 when 0 (good is a commit CI saw green).
	GoodPrior float64
	// FlakePrior is the prior belief that the range only shows flakes;
	// 0.02 when 0.
	FlakePrior float64
	// FlakeRate, when > 0, is the test's flakiness from its history: the
	// flake-rate prior centres on it.
	FlakeRate float64
	// Evidence, when > 1, is how many times likelier than "the test fails
	// half of its runs at every commit, whatever the commit" the runs must
	// be under the search's own model before a culprit is named. It is the
	// product, over every result in the order it was learnt (the known ones
	// first), of the probability the search gave that result just before
	// it, divided by ½: a test flaky everywhere at one run in two has its
	// culprit named at most 1/Evidence of the time, however the search
	// chooses its runs (a likelihood ratio is a martingale under the
	// hypothesis it is against; Ville's inequality). The middle of the
	// range, where either result was as likely, adds nothing: the
	// reproduction at bad and the runs at the culprit and before it, whose
	// results the search expected, do. While the posterior has named a
	// culprit but the evidence is short, the search runs the culprit
	// again, or the commit before it.
	Evidence float64
}

// Finding kinds.
const (
	FindingCulprit    = "culprit" // one commit (or one block of untestable commits) holds Confidence
	FindingFailsGood  = "fails-at-good"
	FindingOnlyFlakes = "only-flakes" // no culprit: the range only shows flakes
	FindingUndecided  = "undecided"   // MaxRuns spent below Confidence
)

// Finding is what a noisy search concluded.
type Finding struct {
	Kind string
	// Culprit is the first failing position (-1 when Kind is not culprit
	// or undecided). Candidates are the positions that cannot be told
	// apart from it because commits between them do not build (Culprit is
	// the last of them); one element when the culprit is exact.
	Culprit    int
	Candidates []int
	// Best is the most likely hypothesis when undecided: a position, or -1
	// for "only flakes".
	Best int
	// Confidence is the posterior of the finding (of Best when undecided).
	Confidence float64
	// Runs counts the probes made; Known the prior results applied.
	Runs  int
	Known int
	// FlakeRate is the posterior mean flake rate.
	FlakeRate float64
	// Evidence is the likelihood ratio reached against "fails half of its
	// runs everywhere" (see NoisySearch.Evidence).
	Evidence float64
	// Results holds every result seen at each position, known ones first.
	Results [][]Result
}

// errNoProgress is returned when no commit left can tell the hypotheses
// apart (every one is untestable) before Confidence is reached.
var errNoProgress = errors.New("no testable commit left")

// defaultMaxRuns is the run bound for a range of n commits: several times
// what plain bisection needs.
func defaultMaxRuns(n int) int {
	steps := 0
	for 1<<steps < n+1 {
		steps++
	}
	return 4*steps + 12
}

// Search runs the search over positions 0 (good) .. n (bad). known holds
// results already seen at each position (from a cache, or the
// reproduction at bad); they cost no runs. p is called for the rest.
func (s NoisySearch) Search(ctx context.Context, n int, known [][]Result, p Prober) (Finding, error) {
	if n < 1 {
		return Finding{}, fmt.Errorf("noisy search: a range of %d commits", n)
	}
	conf := s.Confidence
	if conf <= 0 || conf >= 1 {
		conf = DefaultConfidence
	}
	maxRuns := s.MaxRuns
	if maxRuns <= 0 {
		maxRuns = defaultMaxRuns(n)
	}
	par := max(1, s.Parallel)
	po := s.newPosterior(n)
	f := Finding{Culprit: -1, Best: -1, Results: make([][]Result, n+1)}
	logEv := 0.0 // the log of the likelihood ratio (see Evidence)
	learn := func(i int, r Result) {
		logEv += evidenceOf(r, po.observe(i, r))
		f.Results[i] = append(f.Results[i], r)
	}
	for i, rs := range known {
		if i > n {
			break
		}
		for _, r := range rs {
			learn(i, r)
			f.Known++
		}
	}
	for {
		a, _ := po.marginals()
		block, mass := po.best(a)
		f.Confidence = mass
		f.FlakeRate = po.meanFlakeRate()
		f.Evidence = math.Exp(logEv)
		confirm := mass >= conf && block != nil && block[0] != 0 && s.Evidence > 1 && logEv < math.Log(s.Evidence)
		if mass >= conf && !confirm {
			switch {
			case block == nil:
				f.Kind = FindingOnlyFlakes
			case block[0] == 0:
				f.Kind = FindingFailsGood
			default:
				f.Kind = FindingCulprit
				f.Culprit = block[len(block)-1]
				f.Candidates = block
			}
			return f, nil
		}
		if f.Runs >= maxRuns {
			f.Kind = FindingUndecided
			if block != nil {
				f.Best = block[len(block)-1]
				f.Candidates = block
			}
			return f, nil
		}
		picks := po.pick(min(par, maxRuns-f.Runs))
		if confirm {
			// Decided, but not yet against a test that fails anywhere:
			// the culprit again, where a failure is expected, or the
			// commit before it, where a pass is, whichever is expected
			// to add more.
			picks = []int{po.confirmAt(block)}
		}
		if len(picks) == 0 {
			f.Kind = FindingUndecided
			if block != nil {
				f.Best = block[len(block)-1]
				f.Candidates = block
			}
			return f, errNoProgress
		}
		results, err := probeAll(ctx, p, picks)
		if err != nil {
			return f, err
		}
		for k, i := range picks {
			f.Runs++
			for _, r := range results[k] {
				learn(i, r)
			}
			if len(results[k]) == 0 {
				// A probe with no result says nothing; do not ask again.
				po.skip[i] = true
			}
		}
	}
}

// probeAll runs the probes, concurrently when there are several.
func probeAll(ctx context.Context, p Prober, picks []int) ([][]Result, error) {
	out := make([][]Result, len(picks))
	if len(picks) == 1 {
		r, err := p.Probe(ctx, picks[0])
		out[0] = r
		return out, err
	}
	errs := make([]error, len(picks))
	var wg sync.WaitGroup
	for k, i := range picks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[k] = fmt.Errorf("probe at %d panicked: %v", i, v)
				}
			}()
			out[k], errs[k] = p.Probe(ctx, i)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// flakyEverywhereRate is the failure rate, at every commit, of the test
// with no culprit that NoisySearch.Evidence is held against.
const flakyEverywhereRate = 0.5

// evidenceOf is the log of what a result the search gave probability q
// before it adds to the likelihood ratio against a test that fails half of
// its runs at every commit: q over ½ for a pass or a failure; nothing for a
// test that is missing or did not run, which says nothing of flakiness.
func evidenceOf(r Result, q float64) float64 {
	if (r != ResultPass && r != ResultFail) || q <= 0 || math.IsNaN(q) {
		return 0
	}
	return math.Log(q / flakyEverywhereRate)
}
