package bisect

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// history is a simulated range: the culprit's position, untestable
// positions, where the test appears and a flake rate before the culprit.
type history struct {
	culprit, added int
	skip           map[int]bool
	flake          float64
	always         bool // fails everywhere (broken before good)
	rng            *rand.Rand
	mu             sync.Mutex
	runs           []int
}

func (h *history) Probe(_ context.Context, i int) ([]Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs = append(h.runs, i)
	switch {
	case h.skip[i]:
		return []Result{ResultSkip}, nil
	case i < h.added:
		return []Result{ResultMissing}, nil
	case h.always || i >= h.culprit:
		return []Result{ResultFail}, nil
	case h.rng.Float64() < h.flake:
		return []Result{ResultFail}, nil
	}
	return []Result{ResultPass}, nil
}

func newHistory(culprit int, flake float64, seed uint64) *history {
	return &history{culprit: culprit, flake: flake, rng: rand.New(rand.NewPCG(seed, 7))}
}

func TestNoisySearchExactWithoutFlakes(t *testing.T) {
	t.Parallel()
	for _, culprit := range []int{1, 17, 63, 64} {
		h := newHistory(culprit, 0, 1)
		f, err := NoisySearch{}.Search(context.Background(), 64, nil, h)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != FindingCulprit || f.Culprit != culprit || f.Confidence < DefaultConfidence {
			t.Errorf("culprit %d: finding %+v", culprit, f)
		}
		// Plain bisection takes 6 runs on 64 commits.
		if f.Runs > 12 {
			t.Errorf("culprit %d: %d runs, want at most twice bisection's 6", culprit, f.Runs)
		}
	}
}

// A transient failure, even one at good, does not decide anything: the
// search runs again where evidence is weak.
func TestNoisySearchSurvivesFlakes(t *testing.T) {
	t.Parallel()
	right := 0
	const trials = 200
	for seed := range uint64(trials) {
		h := newHistory(1+int(seed*7)%40, 0.2, seed)
		// The first run at good fails.
		known := make([][]Result, 41)
		known[0] = []Result{ResultFail}
		f, err := NoisySearch{}.Search(context.Background(), 40, known, h)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind == FindingCulprit && f.Culprit == h.culprit {
			right++
		}
	}
	if right < trials*97/100 {
		t.Errorf("%d/%d right at 20%% flakes, want at least 97%%", right, trials)
	}
}

// Each search runs over a simulated history; the check says what it must
// have found there.
func TestNoisySearchFindings(t *testing.T) {
	t.Parallel()
	knownSteps := make([][]Result, 9)
	for i := range knownSteps {
		r := ResultPass
		if i >= 5 {
			r = ResultFail
		}
		knownSteps[i] = []Result{r, r, r}
	}
	// One run at bad failed.
	failsAtBad := make([][]Result, 33)
	failsAtBad[32] = []Result{ResultFail}
	for _, c := range []struct {
		name    string
		search  NoisySearch
		n       int
		history func() *history
		known   [][]Result
		check   func(t *testing.T, f Finding, h *history)
	}{
		{
			// Nothing broke: the test fails half the time everywhere, bad
			// included.
			name: "only flakes", n: 32, known: failsAtBad,
			history: func() *history { return newHistory(1000, 0.5, 3) },
			check: func(t *testing.T, f Finding, _ *history) {
				if f.Kind != FindingOnlyFlakes || f.Culprit != -1 {
					t.Errorf("finding %s (culprit %d, %.3f), want only-flakes", f.Kind, f.Culprit, f.Confidence)
				}
				if f.Runs > defaultMaxRuns(32) {
					t.Errorf("%d runs, more than the bound %d", f.Runs, defaultMaxRuns(32))
				}
			},
		},
		{
			name: "fails at good", n: 16,
			history: func() *history { return &history{always: true} },
			check: func(t *testing.T, f Finding, _ *history) {
				if f.Kind != FindingFailsGood {
					t.Errorf("finding %+v, want fails-at-good", f)
				}
			},
		},
		{
			// A test added after good passes before it; the commit that
			// adds it failing is the culprit.
			name: "test added failing", n: 50,
			history: func() *history {
				h := newHistory(23, 0.1, 4)
				h.added = 23
				return h
			},
			check: func(t *testing.T, f Finding, _ *history) {
				if f.Kind != FindingCulprit || f.Culprit != 23 || !slices.Contains(f.Results[22], ResultMissing) {
					t.Errorf("finding %s culprit %d, results before it %v", f.Kind, f.Culprit, f.Results[22])
				}
			},
		},
		{
			// Untestable commits cannot be told apart from the next
			// testable one: the finding names them all.
			name: "skipped block", n: 20,
			history: func() *history {
				h := newHistory(11, 0, 5)
				h.skip = map[int]bool{9: true, 10: true, 11: true}
				return h
			},
			check: func(t *testing.T, f Finding, h *history) {
				if f.Kind != FindingCulprit || !slices.Equal(f.Candidates, []int{9, 10, 11, 12}) {
					t.Errorf("finding %s candidates %v, want 9..12", f.Kind, f.Candidates)
				}
				for i := range h.skip {
					if n := count1(h.runs, i); n > 1 {
						t.Errorf("untestable position %d run %d times", i, n)
					}
				}
			},
		},
		{
			name: "known results cost nothing", n: 8, known: knownSteps,
			history: func() *history { return newHistory(5, 0, 6) },
			check: func(t *testing.T, f Finding, _ *history) {
				if f.Culprit != 5 || f.Runs != 0 || f.Known != 27 {
					t.Errorf("finding culprit %d runs %d known %d, want 5, 0, 27", f.Culprit, f.Runs, f.Known)
				}
			},
		},
		{
			name: "parallel", search: NoisySearch{Parallel: 4}, n: 256,
			history: func() *history { return newHistory(100, 0.1, 8) },
			check: func(t *testing.T, f Finding, _ *history) {
				if f.Kind != FindingCulprit || f.Culprit != 100 {
					t.Errorf("finding %s culprit %d, want 100", f.Kind, f.Culprit)
				}
			},
		},
		{
			name: "bounded", search: NoisySearch{MaxRuns: 5}, n: 256,
			history: func() *history { return newHistory(100, 0.5, 9) },
			check: func(t *testing.T, f Finding, h *history) {
				if f.Runs != 5 || f.Kind != FindingUndecided || len(h.runs) != 5 {
					t.Errorf("finding %s after %d runs (%d probes), want undecided after 5", f.Kind, f.Runs, len(h.runs))
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := c.history()
			f, err := c.search.Search(context.Background(), c.n, c.known, h)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, f, h)
		})
	}
}

func count1(xs []int, x int) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
