package bisect

import "math"

// brokenPassRate is how often a test that a commit broke still passes at or
// after it: small, not zero, so that one pass cannot rule a commit out for
// ever. One pass before the culprit weighs about 450 to 1 against a culprit
// at or before it: with 0.01 it weighed 90 to 1, short of the confidence
// asked for, and the commit before the culprit was run a second time in
// most searches.
const brokenPassRate = 0.002

// missingFailRate is how likely a "test does not exist here" is after the
// culprit: almost never (the test would have to be removed and added
// again).
const missingFailRate = 1e-4

// flakeGrid is the set of flake rates the search weighs at once: it does
// not know how flaky the test is, and learns it from the runs.
var flakeGrid = []float64{0.001, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3}

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

// observe updates the posterior with result r at i, and returns the
// probability the posterior gave r there before it (its normalizer).
func (po *posterior) observe(i int, r Result) float64 {
	if r == ResultSkip {
		po.skip[i] = true
		return 0
	}
	var z float64
	for h := range po.p {
		for j, e := range po.eps {
			po.p[h][j] *= po.likelihood(r, i, h, e)
			z += po.p[h][j]
		}
	}
	if z <= 0 || math.IsNaN(z) {
		return 0 // impossible evidence under every hypothesis: ignore it
	}
	for h := range po.p {
		for j := range po.eps {
			po.p[h][j] /= z
		}
	}
	return z
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

func (po *posterior) meanFlakeRate() float64 {
	var m float64
	for _, row := range po.p {
		for j, v := range row {
			m += v * po.eps[j]
		}
	}
	return m
}

// failProb is the probability the posterior gives a failure at i.
func (po *posterior) failProb(i int) float64 {
	var q float64
	for h, row := range po.p {
		for j, e := range po.eps {
			q += row[j] * po.likelihood(ResultFail, i, h, e)
		}
	}
	return q
}

// confirmAt is where to run to add most, in expectation, to the evidence
// against a test failing half of its runs everywhere (NoisySearch.Evidence),
// once block is the culprit: at it (a failure expected) or at the testable
// commit before it (a pass expected). The expected gain of a run is the
// divergence of the posterior's prediction there from a coin's.
func (po *posterior) confirmAt(block []int) int {
	gain := func(i int) float64 {
		q := po.failProb(i)
		return xlogx(q) + xlogx(1-q) - math.Log(flakyEverywhereRate)
	}
	at := block[len(block)-1]
	if before := block[0] - 1; before >= 0 && !po.skip[before] && gain(before) > gain(at) {
		return before
	}
	return at
}
