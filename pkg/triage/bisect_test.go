package triage

import (
	"context"
	"errors"
	"math/bits"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestBisectFindsBreakingCommit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	bis, err := Bisect(ctx, f.dir, shas[0], "HEAD", []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	want := task.Bisection{
		Good: shas[5], Bad: shas[10], Blame: shas[6],
		Subject: "calc: rewrite Add", Author: gitrepo.AuthorName + " <" + gitrepo.AuthorEmail + ">",
	}
	got := bis
	got.Steps, got.Confidence, got.FlakeRate, got.Finding = 0, 0, 0, ""
	if got != want {
		t.Errorf("bisection = %+v\nwant %+v", got, want)
	}
	if bis.Finding != FindingCulprit || bis.Confidence < DefaultConfidence {
		t.Errorf("finding %s at %.3f, want a culprit at %.3f at least", bis.Finding, bis.Confidence, DefaultConfidence)
	}
	// The verification at bad, then a search over 10 commits that trusts
	// no single run: at most twice plain bisection's verifications and
	// steps.
	if max := 2 * (2 + bits.Len(10)); bis.Steps > max || bis.Steps < 3 {
		t.Errorf("Steps = %d, want 3..%d", bis.Steps, max)
	}
	head, err := f.repo.Resolve(ctx, "HEAD")
	if err != nil || head != shas[10] {
		t.Errorf("checkout left at %s, want bad %s", head, shas[10])
	}
}

func TestBisectProbesBackForGood(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	bis, err := Bisect(ctx, f.dir, "", shas[10], []string{addTestID})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[6] || bis.Good != shas[5] {
		t.Errorf("blame %s good %s, want %s %s", task.Short(bis.Blame), task.Short(bis.Good), task.Short(shas[6]), task.Short(shas[5]))
	}
	// The range starts at the root (history is shorter than the probe
	// limit), trusted less than a good commit: it is tested too.
	if bis.Steps > 14 {
		t.Errorf("Steps = %d, want at most 14", bis.Steps)
	}
}

func TestBisectFallsBackToRoot(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	bis, err := Bisector{ProbeLimit: 2}.Bisect(ctx, f.dir, "", shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[6] {
		t.Errorf("blame %s, want %s", task.Short(bis.Blame), task.Short(shas[6]))
	}
}

func TestBisectRefusesWhatItCannotBisect(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	// The subtests share the checkout: they run one after the other.
	for name, c := range map[string]struct {
		b         Bisector
		good, bad string
		tests     []string
		want      string
		cannot    bool // errors.Is(err, ErrCannotBisect)
	}{
		"passes at bad":       {good: shas[0], bad: shas[3], want: "tests pass at bad " + task.Short(shas[3]), cannot: true},
		"fails at good":       {good: shas[7], bad: shas[10], want: "tests already fail at good " + task.Short(shas[7]), cannot: true},
		"good after bad":      {good: shas[10], bad: shas[8], want: "is not an ancestor", cannot: true},
		"same commit":         {good: shas[10], bad: shas[10], want: "same commit", cannot: true},
		"out of steps":        {b: Bisector{MaxSteps: 3}, good: shas[0], bad: shas[10], want: "gave up after 3 steps", cannot: true},
		"unknown good":        {good: "nope", bad: shas[10], want: "unknown revision"},
		"test does not exist": {good: shas[0], bad: shas[10], tests: []string{"TestNope"}, want: "test not found"},
	} {
		t.Run(name, func(t *testing.T) {
			tests := c.tests
			if tests == nil {
				tests = []string{"TestAdd"}
			}
			_, err := c.b.Bisect(ctx, f.dir, c.good, c.bad, tests)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if errors.Is(err, ErrCannotBisect) != c.cannot {
				t.Errorf("errors.Is(%v, ErrCannotBisect) = %v, want %v", err, !c.cannot, c.cannot)
			}
		})
	}
}

func TestBisectFindsNoGoodCommit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := newFixture(t)
	f.commit("broken from the start", map[string]string{"go.mod": goMod, "calc/calc.go": addBad, "calc/calc_test.go": calcTest})
	f.commit("docs", map[string]string{"README": "calc\n"})
	bad := f.commit("more docs", map[string]string{"README": "calc, still broken\n"})
	bis, err := Bisect(ctx, f.dir, "", bad, []string{"TestAdd"})
	if !errors.Is(err, ErrCannotBisect) || !strings.Contains(err.Error(), "no commit where the tests pass") {
		t.Fatalf("err = %v", err)
	}
	// Every commit fails: the search runs them until it is sure the
	// failure is older than the range.
	if bis.Steps > 10 || bis.Blame != "" || bis.Finding != FindingFailsGood {
		t.Errorf("bisection = %+v, want at most 10 steps, no blame, fails at good", bis)
	}
}

// A commit where the package does not build is skipped, like `git bisect
// skip`: the search tests its neighbour.
func TestBisectSkipsCommitsThatDoNotBuild(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := newFixture(t)
	root := f.commit("calc", map[string]string{"go.mod": goMod, "calc/calc.go": addGood, "calc/calc_test.go": calcTest})
	f.commit("docs 1", map[string]string{"notes/1.txt": "1\n"})
	wip := f.commit("wip: half a function", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int {\n"})
	f.commit("finish Mul", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int { return x * y }\n"})
	breaking := f.commit("calc: rewrite Add", map[string]string{"calc/calc.go": addBad})
	bad := f.commit("docs 2", map[string]string{"notes/2.txt": "2\n"})

	bis, err := Bisect(ctx, f.dir, root, bad, []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != breaking {
		t.Errorf("blame %s, want %s", task.Short(bis.Blame), task.Short(breaking))
	}
	// bad, then the search; the commit that does not build is run once.
	if bis.Steps > 8 {
		t.Errorf("Steps = %d, want at most 8", bis.Steps)
	}
	_ = wip
}

// When only untestable commits separate the last good from the first bad
// one, the bisection says which commits the break may be in.
func TestBisectReportsCandidatesAmongSkippedCommits(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := newFixture(t)
	root := f.commit("calc", map[string]string{"go.mod": goMod, "calc/calc.go": addGood, "calc/calc_test.go": calcTest})
	wip := f.commit("wip: half a function", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int {\n"})
	breaking := f.commit("finish Mul, rewrite Add", map[string]string{
		"calc/wip.go":  "package calc\n\nfunc Mul(x, y int) int { return x * y }\n",
		"calc/calc.go": addBad,
	})
	bad := f.commit("docs", map[string]string{"notes/1.txt": "1\n"})

	bis, err := Bisect(ctx, f.dir, root, bad, []string{"TestAdd"})
	if !errors.Is(err, ErrCannotBisect) {
		t.Fatalf("err = %v, want ErrCannotBisect", err)
	}
	for _, sha := range []string{wip, breaking} {
		if !strings.Contains(err.Error(), task.Short(sha)) {
			t.Errorf("err = %v; it does not name candidate %s", err, task.Short(sha))
		}
	}
	if bis.Blame != "" || bis.Good != root || bis.Bad != bad {
		t.Errorf("bisection = %+v; want no blame, good at the root, bad at HEAD", bis)
	}
}
