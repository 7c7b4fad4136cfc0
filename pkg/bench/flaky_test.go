package bench

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/testrun"
)

// coin is a test that fails in rate of its runs, drawn from a seeded
// source: the language of the flakiness decision's tests.
type coin struct {
	golang.Driver
	rng  *rand.Rand
	rate float64
	runs int
}

func (c *coin) Run(_ context.Context, _ string, ids []string, count int) (testrun.Outcome, error) {
	out := testrun.Outcome{Runs: map[string]report.Runs{}}
	for _, id := range ids {
		for range count {
			c.runs++
			r := out.Runs[id]
			if c.rng.Float64() < c.rate {
				r.Fail++
			} else {
				r.Pass++
			}
			out.Runs[id] = r
		}
	}
	return out, nil
}

// kept counts, over 100 seeded mines, how often a fix's test that fails in
// rate of its runs is taken for one that passes with the fix; and the mean
// runs spent.
func kept(t *testing.T, o MineOptions, rate float64) (int, float64) {
	t.Helper()
	n, spent := 0, 0
	for seed := range uint64(100) {
		l := &coin{rng: rand.New(rand.NewPCG(seed, 0x6d696e65)), rate: rate}
		out, err := runs(context.Background(), o, l, t.TempDir(), []string{"x.TestFix"})
		if err != nil {
			t.Fatal(err)
		}
		if same, _ := steady(out, []string{"x.TestFix"}, true, o.SteadyRuns()); len(same) == 1 {
			n++
		}
		spent += l.runs
	}
	return n, float64(spent) / 100
}

// A fix whose test fails half of the time is kept in fewer than 1 of 100
// seeded mines (three passing runs, the old rule, keep it in about 1 of 8);
// a steady test is kept every time.
func TestMineKeepsACoinFlipFixRarely(t *testing.T) {
	o := MineOptions{Runs: 3}
	if got := o.SteadyRuns(); got != 10 {
		t.Errorf("SteadyRuns = %d with the defaults, want 10 (0.5^10 < 0.001)", got)
	}
	n, mean := kept(t, o, 0.5)
	t.Logf("a 50%% flake: kept %d of 100, %.1f runs on average", n, mean)
	if n >= 1 {
		t.Errorf("a test failing 50%% of its runs was kept in %d of 100 mines, want fewer than 1", n)
	}
	n10, mean10 := kept(t, o, 0.1)
	t.Logf("a 10%% flake: kept %d of 100, %.1f runs on average", n10, mean10)
	if n, _ := kept(t, o, 0); n != 100 {
		t.Errorf("a steady test was kept in %d of 100 mines, want every one", n)
	}
	// The old rule, three runs, is not evidence against a coin flip.
	if n3, _ := kept(t, MineOptions{Runs: 3, FlakeRate: 0.5, FlakeError: 0.2}, 0.5); n3 < 5 {
		t.Errorf("three runs kept a coin flip in %d of 100 mines: the check would not see the old rule", n3)
	}
	if got := (MineOptions{Runs: 3, FlakeRate: 0.1, FlakeError: 0.01}).SteadyRuns(); got != 44 {
		t.Errorf("SteadyRuns for a 10%% flake at 1%% = %d, want 44", got)
	}
}
