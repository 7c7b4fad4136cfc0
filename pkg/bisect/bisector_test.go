package bisect

import (
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

func TestBisectFindsBreakingCommit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	bis, err := Bisector{Lang: goLang}.Bisect(ctx, f.Dir, shas[0], "HEAD", []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	want := task.Bisection{
		Good: shas[5], Bad: shas[10], Blame: shas[6],
		Subject: "calc: rewrite Add", Author: gitrepo.AuthorName + " <" + gitrepo.AuthorEmail + ">",
	}
	got := bis
	got.Steps, got.Confidence, got.FlakeRate, got.Finding, got.Evidence = 0, 0, 0, "", 0
	if got != want {
		t.Errorf("bisection = %+v\nwant %+v", got, want)
	}
	if bis.Finding != FindingCulprit || bis.Confidence < DefaultConfidence || bis.Evidence <= 1 {
		t.Errorf("finding %s at %.3f, evidence %.1f; want a culprit at %.3f at least, its runs evidence against a test failing at random", bis.Finding, bis.Confidence, bis.Evidence, DefaultConfidence)
	}
	// The verification at bad, then a search over 10 commits that trusts
	// no single run: at most twice plain bisection's verifications and
	// steps.
	if max := 2 * (2 + bits.Len(10)); bis.Steps > max || bis.Steps < 3 {
		t.Errorf("Steps = %d, want 3..%d", bis.Steps, max)
	}
	head, err := f.Repo.Resolve(ctx, "HEAD")
	if err != nil || head != shas[10] {
		t.Errorf("checkout left at %s, want bad %s", head, shas[10])
	}
}

// With no good commit given, the range starts ProbeLimit first-parent
// commits back from bad, or at the root commit.
func TestBisectWithoutGood(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		b        Bisector
		test     string
		wantGood bool // the blame's parent is the good commit found
		maxSteps int  // 0: not bounded
	}{
		// The range starts at the root (history is shorter than the probe
		// limit), trusted less than a good commit: it is tested too.
		{name: "probes back for good", test: bisecttest.AddTestID, wantGood: true, maxSteps: 14},
		// Two commits back the tests fail as well: the root is tried.
		{name: "falls back to root", b: Bisector{Lang: goLang, ProbeLimit: 2}, test: "TestAdd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			f, shas := bisecttest.CalcHistory(t)
			c.b.Lang = goLang
			bis, err := c.b.Bisect(ctx, f.Dir, "", shas[10], []string{c.test})
			if err != nil {
				t.Fatal(err)
			}
			if bis.Blame != shas[6] || c.wantGood && bis.Good != shas[5] {
				t.Errorf("blame %s good %s, want %s %s", task.Short(bis.Blame), task.Short(bis.Good), task.Short(shas[6]), task.Short(shas[5]))
			}
			if c.maxSteps > 0 && bis.Steps > c.maxSteps {
				t.Errorf("Steps = %d, want at most %d", bis.Steps, c.maxSteps)
			}
		})
	}
}

func TestBisectRefusesWhatItCannotBisect(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	// The subtests share the checkout: they run one after the other.
	for name, c := range map[string]struct {
		b         Bisector
		good, bad string
		tests     []string
		want      string
		cannot    bool // errors.Is(err, ErrCannotBisect)
		failsGood bool // errors.Is(err, ErrFailsAtGood)
	}{
		"passes at bad":       {good: shas[0], bad: shas[3], want: "tests pass at bad " + task.Short(shas[3]), cannot: true},
		"fails at good":       {good: shas[7], bad: shas[10], want: "tests already fail at good " + task.Short(shas[7]), cannot: true, failsGood: true},
		"good after bad":      {good: shas[10], bad: shas[8], want: "is not an ancestor", cannot: true},
		"same commit":         {good: shas[10], bad: shas[10], want: "same commit", cannot: true},
		"out of steps":        {b: Bisector{Lang: goLang, MaxSteps: 3}, good: shas[0], bad: shas[10], want: "gave up after 3 steps", cannot: true},
		"unknown good":        {good: "nope", bad: shas[10], want: "unknown revision"},
		"test does not exist": {good: shas[0], bad: shas[10], tests: []string{"TestNope"}, want: "test not found"},
	} {
		t.Run(name, func(t *testing.T) {
			tests := c.tests
			if tests == nil {
				tests = []string{"TestAdd"}
			}
			c.b.Lang = goLang
			_, err := c.b.Bisect(ctx, f.Dir, c.good, c.bad, tests)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if errors.Is(err, ErrCannotBisect) != c.cannot {
				t.Errorf("errors.Is(%v, ErrCannotBisect) = %v, want %v", err, !c.cannot, c.cannot)
			}
			if errors.Is(err, ErrFailsAtGood) != c.failsGood {
				t.Errorf("errors.Is(%v, ErrFailsAtGood) = %v, want %v", err, !c.failsGood, c.failsGood)
			}
		})
	}
}

func TestBisectFindsNoGoodCommit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	f.Commit("broken from the start", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddBad, "calc/calc_test.go": bisecttest.CalcTest})
	f.Commit("docs", map[string]string{"README": "calc\n"})
	bad := f.Commit("more docs", map[string]string{"README": "calc, still broken\n"})
	bis, err := Bisector{Lang: goLang}.Bisect(ctx, f.Dir, "", bad, []string{"TestAdd"})
	// No good was given: the probed start failing is not ErrFailsAtGood.
	if !errors.Is(err, ErrCannotBisect) || errors.Is(err, ErrFailsAtGood) || !strings.Contains(err.Error(), "no commit where the tests pass") {
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
	f := bisecttest.NewRepo(t)
	root := f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddGood, "calc/calc_test.go": bisecttest.CalcTest})
	f.Commit("docs 1", map[string]string{"notes/1.txt": "1\n"})
	wip := f.Commit("wip: half a function", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int {\n"})
	f.Commit("finish Mul", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int { return x * y }\n"})
	breaking := f.Commit("calc: rewrite Add", map[string]string{"calc/calc.go": bisecttest.AddBad})
	bad := f.Commit("docs 2", map[string]string{"notes/2.txt": "2\n"})

	bis, err := Bisector{Lang: goLang}.Bisect(ctx, f.Dir, root, bad, []string{"TestAdd"})
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
	f := bisecttest.NewRepo(t)
	root := f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddGood, "calc/calc_test.go": bisecttest.CalcTest})
	wip := f.Commit("wip: half a function", map[string]string{"calc/wip.go": "package calc\n\nfunc Mul(x, y int) int {\n"})
	breaking := f.Commit("finish Mul, rewrite Add", map[string]string{
		"calc/wip.go":  "package calc\n\nfunc Mul(x, y int) int { return x * y }\n",
		"calc/calc.go": bisecttest.AddBad,
	})
	bad := f.Commit("docs", map[string]string{"notes/1.txt": "1\n"})

	bis, err := Bisector{Lang: goLang}.Bisect(ctx, f.Dir, root, bad, []string{"TestAdd"})
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

// flakyAddTest is TestAdd that also fails, before Add breaks, on every
// third run (counted in a file outside the repository): a transient
// failure such as a reset connection.
func flakyAddTest(counter string) string {
	return fmt.Sprintf(`package calc

import (
	"os"
	"strconv"
	"testing"
)

func TestAdd(t *testing.T) {
	data, _ := os.ReadFile(%q)
	n, _ := strconv.Atoi(string(data))
	n++
	if err := os.WriteFile(%[1]q, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n%%3 == 2 {
		t.Fatalf("run %%d: read tcp 127.0.0.1:4242: connection reset by peer", n)
	}
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %%d, want 3", got)
	}
}
`, counter)
}

// The test fails at commits before the break for a transient reason; the
// search still names the commit that broke it.
func TestBisectFlakyTestNamesTheCulprit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	test := flakyAddTest(filepath.Join(t.TempDir(), "runs"))
	shas := []string{f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddGood, "calc/calc_test.go": test})}
	for i := 1; i <= 12; i++ {
		files := map[string]string{fmt.Sprintf("notes/%d.txt", i): "note\n"}
		if i == 8 {
			files["calc/calc.go"] = bisecttest.AddBad
		}
		shas = append(shas, f.Commit(fmt.Sprintf("change %d", i), files))
	}
	cache := bisecttest.NewRunCache()
	bis, err := Bisector{Lang: goLang, Cache: cache}.Bisect(ctx, f.Dir, shas[0], shas[12], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[8] || bis.Good != shas[7] {
		t.Errorf("blame %s good %s, want %s %s", task.Short(bis.Blame), task.Short(bis.Good), task.Short(shas[8]), task.Short(shas[7]))
	}
	// The search did see flakes before the break, and ran again.
	flakes := 0
	for _, sha := range shas[:8] {
		flakes += cache.At(bisecttest.AddTestID, sha).Failed
	}
	if flakes == 0 {
		runs, _ := cache.CommitRuns(ctx, bisecttest.AddTestID)
		t.Errorf("no failure before the break was seen: the test is not flaky in this history (%+v)", runs)
	}
	if bis.Confidence < DefaultConfidence || bis.FlakeRate == 0 {
		t.Errorf("confidence %.3f flake rate %.3f", bis.Confidence, bis.FlakeRate)
	}
}

// A test added after good passes before it exists; when the commit that
// adds it is the culprit, the bisection says so.
func TestBisectTestAddedAfterGood(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	for _, c := range []struct {
		name           string
		addAt, breakAt int
	}{
		{"broken later", 3, 6},
		{"added failing", 4, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := bisecttest.NewRepo(t)
			shas := []string{f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddGood})}
			for i := 1; i <= 8; i++ {
				files := map[string]string{fmt.Sprintf("notes/%d.txt", i): "note\n"}
				if i == c.addAt {
					files["calc/calc_test.go"] = bisecttest.CalcTest
				}
				if i == c.breakAt {
					files["calc/calc.go"] = bisecttest.AddBad
				}
				shas = append(shas, f.Commit(fmt.Sprintf("change %d", i), files))
			}
			bis, err := Bisector{Lang: goLang}.Bisect(ctx, f.Dir, shas[0], shas[8], []string{bisecttest.AddTestID})
			if err != nil {
				t.Fatal(err)
			}
			culprit := max(c.addAt, c.breakAt)
			if bis.Blame != shas[culprit] {
				t.Errorf("blame %s, want %s", task.Short(bis.Blame), task.Short(shas[culprit]))
			}
			if added := c.addAt >= c.breakAt; bis.AddedTest != added {
				t.Errorf("AddedTest = %v, want %v", bis.AddedTest, added)
			}
		})
	}
}
