package bisect

import (
	"context"
	"math"
	"testing"
)

// A test that fails half of its runs at every commit and got through two
// re-runs at bad is blamed on a commit at most once in 32 when the search
// asks evidence 32 of its culprit; without it, the search names a culprit
// for most of them (its adaptive runs always fit some culprit).
func TestEvidenceBoundsACulpritForATestFlakyEverywhere(t *testing.T) {
	t.Parallel()
	const trials = 2000
	on, err := SimulateFlakyEverywhere(context.Background(), NoisySearch{Evidence: 32}, 64, 0.5, 2, 5, trials, 7)
	if err != nil {
		t.Fatal(err)
	}
	off, err := SimulateFlakyEverywhere(context.Background(), NoisySearch{}, 64, 0.5, 2, 5, trials, 7)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("evidence 32: %+v; none: %+v", on, off)
	if on.Named > trials/32 {
		t.Errorf("with evidence 32 a culprit was named for %d of %d tests flaky everywhere, want at most %d", on.Named, trials, trials/32)
	}
	if off.Named < 3*trials/32 {
		t.Errorf("without evidence a culprit was named for only %d of %d: the check shows nothing", off.Named, trials)
	}
	if on.Dropped != off.Dropped || on.Dropped < trials/2 {
		t.Errorf("the re-runs at bad dropped %d and %d of %d, want the same, about three in four", on.Dropped, off.Dropped, trials)
	}
}

// The evidence comes from results the search expected: a culprit it is
// sure of is run again until the ratio is reached, and the finding reports
// it.
func TestSearchConfirmsItsCulpritUntilTheEvidenceHolds(t *testing.T) {
	t.Parallel()
	const n, culprit = 32, 20
	runs := map[int]int{}
	p := ProberFunc(func(_ context.Context, i int) ([]Result, error) {
		runs[i]++
		if i >= culprit {
			return []Result{ResultFail}, nil
		}
		return []Result{ResultPass}, nil
	})
	known := make([][]Result, n+1)
	known[n] = []Result{ResultFail}
	plain, err := NoisySearch{}.Search(context.Background(), n, known, p)
	if err != nil || plain.Kind != FindingCulprit || plain.Culprit != culprit {
		t.Fatalf("without evidence: %+v, %v", plain, err)
	}
	want := 4 * plain.Evidence
	clear(runs)
	f, err := NoisySearch{Evidence: want}.Search(context.Background(), n, known, p)
	if err != nil || f.Kind != FindingCulprit || f.Culprit != culprit {
		t.Fatalf("with evidence %.0f: %+v, %v", want, f, err)
	}
	if f.Evidence < want || f.Runs <= plain.Runs {
		t.Errorf("evidence %.1f after %d runs (without it %.1f after %d), want at least %.1f after more runs", f.Evidence, f.Runs, plain.Evidence, plain.Runs, want)
	}
	if extra := runs[culprit] + runs[culprit-1]; extra < 2 {
		t.Errorf("the culprit and the commit before it ran %d times, want them run again: %v", extra, runs)
	}
	// Each expected result adds at most a factor of 2 (½ is the other
	// hypothesis' probability of every result).
	if max := math.Pow(2, float64(f.Runs+f.Known)); f.Evidence > max {
		t.Errorf("evidence %.1f over %d results, more than %.0f", f.Evidence, f.Runs+f.Known, max)
	}
	// Asked more than the run bound can give, it names nothing.
	u, err := NoisySearch{Evidence: 1e12, MaxRuns: 20}.Search(context.Background(), n, known, p)
	if err != nil || u.Kind != FindingUndecided || u.Best != culprit {
		t.Errorf("asked evidence 1e12 within 20 runs: %+v, %v", u, err)
	}
}
