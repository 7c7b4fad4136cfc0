package bisect

import (
	"math"
	"slices"
)

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
