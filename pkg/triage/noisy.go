package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Result is what one run of a test did at one commit, as the noisy search
// sees it.
type Result int

// The results of one run. Missing is a pass that no flake can turn into a
// failure: the test does not exist at that commit, so `go test -run` runs
// nothing there. Skip says nothing about the culprit: the package did not
// build.
const (
	ResultPass Result = iota
	ResultFail
	ResultMissing
	ResultSkip
)

func (r Result) String() string {
	switch r {
	case ResultPass:
		return "pass"
	case ResultFail:
		return "fail"
	case ResultMissing:
		return "missing"
	case ResultSkip:
		return "skip"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

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

// Defaults of NoisySearch.
const (
	DefaultConfidence = 0.995
	// brokenPassRate is how often a test that a commit broke still passes
	// at or after it: small, not zero, so that one pass cannot rule a
	// commit out for ever.
	brokenPassRate = 0.01
	// missingFailRate is how likely a "test does not exist here" is after
	// the culprit: almost never (the test would have to be removed and
	// added again).
	missingFailRate = 1e-4
)

// flakeGrid is the set of flake rates the search weighs at once: it does
// not know how flaky the test is, and learns it from the runs.
var flakeGrid = []float64{0.001, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3}

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
	// Results holds every result seen at each position, known ones first.
	Results [][]Result
}

// ErrNoProgress is returned when no commit left can tell the hypotheses
// apart (every one is untestable) before Confidence is reached.
var errNoProgress = errors.New("no testable commit left")

// posterior is the joint belief over hypotheses (0..n, then flakes at n+1)
// and the flake grid.
type posterior struct {
	n    int
	p    [][]float64 // [h][j]
	eps  []float64
	skip []bool // positions that do not build
}

func (s NoisySearch) newPosterior(n int) *posterior {
	goodPrior, flakePrior := s.GoodPrior, s.FlakePrior
	if goodPrior <= 0 {
		goodPrior = 0.01
	}
	if flakePrior <= 0 {
		flakePrior = 0.02
	}
	// Flake-rate prior: flat over the grid, or centred on the history's
	// rate when there is one.
	w := make([]float64, len(flakeGrid))
	var sum float64
	for j, e := range flakeGrid {
		w[j] = 1
		if s.FlakeRate > 0 {
			d := math.Log(e) - math.Log(s.FlakeRate)
			w[j] = math.Exp(-d*d/2) + 0.05
		}
		sum += w[j]
	}
	po := &posterior{n: n, eps: flakeGrid, skip: make([]bool, n+1)}
	po.p = make([][]float64, n+2)
	for h := range po.p {
		var ph float64
		switch {
		case h == 0:
			ph = goodPrior
		case h == n+1:
			ph = flakePrior
		default:
			ph = (1 - goodPrior - flakePrior) / float64(n)
		}
		po.p[h] = make([]float64, len(flakeGrid))
		for j := range flakeGrid {
			po.p[h][j] = ph * w[j] / sum
		}
	}
	return po
}

// likelihood of result r at position i under hypothesis h with flake rate e.
func (po *posterior) likelihood(r Result, i, h int, e float64) float64 {
	broken := h <= i && h <= po.n // the culprit is at or before i
	switch r {
	case ResultFail:
		if broken {
			return 1 - brokenPassRate
		}
		return e
	case ResultPass:
		if broken {
			return brokenPassRate
		}
		return 1 - e
	case ResultMissing:
		if broken {
			return missingFailRate
		}
		return 1
	}
	return 1
}

func (po *posterior) observe(i int, r Result) {
	if r == ResultSkip {
		po.skip[i] = true
		return
	}
	var z float64
	for h := range po.p {
		for j, e := range po.eps {
			po.p[h][j] *= po.likelihood(r, i, h, e)
			z += po.p[h][j]
		}
	}
	if z <= 0 || math.IsNaN(z) {
		return // impossible evidence under every hypothesis: ignore it
	}
	for h := range po.p {
		for j := range po.eps {
			po.p[h][j] /= z
		}
	}
}

// marginals are each hypothesis' probability (A) and its flake-weighted
// probability (B = Σ_j p·ε_j).
func (po *posterior) marginals() (a, b []float64) {
	a = make([]float64, len(po.p))
	b = make([]float64, len(po.p))
	for h, row := range po.p {
		for j, v := range row {
			a[h] += v
			b[h] += v * po.eps[j]
		}
	}
	return a, b
}

func xlogx(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * math.Log(x)
}

// expectedEntropy of the culprit posterior after one run at each position,
// computed for all positions at once with prefix sums; +Inf where a run
// cannot be made.
func (po *posterior) expectedEntropy(a, b []float64) []float64 {
	n := po.n
	// Prefix over h ≤ i of the "broken" weights, suffix over h > i of the
	// "not broken" ones (the flakes hypothesis is always not broken).
	fb := 1 - brokenPassRate
	preA, preFail, prePass := make([]float64, n+2), make([]float64, n+2), make([]float64, n+2)
	for h := 0; h <= n; h++ {
		preA[h+1] = preA[h] + a[h]
		preFail[h+1] = preFail[h] + xlogx(fb*a[h])
		prePass[h+1] = prePass[h] + xlogx(brokenPassRate*a[h])
	}
	sufB, sufFail, sufPass := make([]float64, n+3), make([]float64, n+3), make([]float64, n+3)
	sufB[n+1] = b[n+1]
	sufFail[n+1] = xlogx(b[n+1])
	sufPass[n+1] = xlogx(a[n+1] - b[n+1])
	sufA := make([]float64, n+3)
	sufA[n+1] = a[n+1]
	for h := n; h >= 0; h-- {
		sufA[h] = sufA[h+1] + a[h]
		sufB[h] = sufB[h+1] + b[h]
		sufFail[h] = sufFail[h+1] + xlogx(b[h])
		sufPass[h] = sufPass[h+1] + xlogx(a[h]-b[h])
	}
	out := make([]float64, n+1)
	for i := 0; i <= n; i++ {
		if po.skip[i] {
			out[i] = math.Inf(1)
			continue
		}
		// h ≤ i broken (indices 0..i), h > i not.
		zf := fb*preA[i+1] + sufB[i+1]
		zp := brokenPassRate*preA[i+1] + (sufA[i+1] - sufB[i+1])
		var hf, hp float64
		if zf > 0 {
			hf = math.Log(zf) - (preFail[i+1]+sufFail[i+1])/zf
		}
		if zp > 0 {
			hp = math.Log(zp) - (prePass[i+1]+sufPass[i+1])/zp
		}
		out[i] = zf*hf + zp*hp
	}
	return out
}

// blocks groups positions that no run can tell apart: a run of untestable
// positions belongs with the next testable one (a culprit among them
// shows first there). Position 0 stands alone.
func (po *posterior) blocks() [][]int {
	var out [][]int
	var cur []int
	out = append(out, []int{0})
	for i := 1; i <= po.n; i++ {
		cur = append(cur, i)
		if !po.skip[i] || i == po.n {
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

// best is the most likely block (nil for "only flakes") and its mass.
func (po *posterior) best(a []float64) (block []int, mass float64) {
	mass = a[po.n+1]
	for _, bl := range po.blocks() {
		var m float64
		for _, i := range bl {
			m += a[i]
		}
		if m > mass {
			block, mass = bl, m
		}
	}
	return block, mass
}

// pick chooses up to k positions to run next: the one of greatest
// information gain, then, for parallel runs, the quantiles of the culprit's
// distribution.
func (po *posterior) pick(k int) []int {
	a, b := po.marginals()
	ee := po.expectedEntropy(a, b)
	first := -1
	for i, v := range ee {
		if math.IsInf(v, 1) {
			continue
		}
		if first < 0 || v < ee[first]-1e-12 {
			first = i
		}
	}
	if first < 0 {
		return nil
	}
	picks := []int{first}
	if k <= 1 {
		return picks
	}
	// Quantiles of the culprit's cumulative distribution over 0..n: the
	// commit just before each quantile splits the remaining mass.
	var total float64
	for h := 0; h <= po.n; h++ {
		total += a[h]
	}
	for q := 1; q < k+1 && len(picks) < k; q++ {
		target := total * float64(q) / float64(k+1)
		var cum float64
		for h := 0; h <= po.n; h++ {
			cum += a[h]
			if cum >= target {
				i := h
				for i >= 0 && po.skip[i] {
					i--
				}
				if i >= 0 && !slices.Contains(picks, i) {
					picks = append(picks, i)
				}
				break
			}
		}
	}
	return picks
}

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
	for i, rs := range known {
		if i > n {
			break
		}
		for _, r := range rs {
			po.observe(i, r)
			f.Known++
			f.Results[i] = append(f.Results[i], r)
		}
	}
	for {
		a, _ := po.marginals()
		block, mass := po.best(a)
		f.Confidence = mass
		f.FlakeRate = po.meanFlakeRate()
		if mass >= conf {
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
				po.observe(i, r)
				f.Results[i] = append(f.Results[i], r)
			}
			if len(results[k]) == 0 {
				// A probe with no result says nothing; do not ask again.
				po.skip[i] = true
			}
		}
	}
}

func (po *posterior) meanFlakeRate() float64 {
	var m float64
	for _, row := range po.p {
		for j, v := range row {
			m += v * po.eps[j]
		}
	}
	return m
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
