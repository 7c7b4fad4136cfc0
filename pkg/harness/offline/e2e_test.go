package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// scenario is a tiny module's history: a good state, a commit that breaks
// the test named failing, and a later unrelated commit.
type scenario struct {
	name    string
	good    map[string]string // files of the first commit
	bug     map[string]string // files the blame commit writes
	later   map[string]string // files the unrelated later commit writes
	failing string            // the test that the bug breaks
	fixable bool
}

const goMod = "module example.com/shop\n\ngo 1.22\n"

var scenarios = []scenario{
	{
		name: "comparison",
		good: map[string]string{
			"go.mod": goMod,
			"stock/stock.go": `package stock

// CountBelow counts the levels strictly below limit.
func CountBelow(levels []int, limit int) int {
	n := 0
	for _, l := range levels {
		if l < limit {
			n++
		}
	}
	return n
}
`,
			"stock/stock_test.go": `package stock

import "testing"

func TestCountBelow(t *testing.T) {
	if got := CountBelow([]int{1, 2, 3, 2}, 2); got != 1 {
		t.Errorf("CountBelow = %d, want 1", got)
	}
}
`,
		},
		bug: map[string]string{"stock/stock.go": `package stock

// CountBelow counts the levels at or below limit.
func CountBelow(levels []int, limit int) int {
	n := 0
	for _, l := range levels {
		if l <= limit {
			n++
		}
	}
	return n
}
`},
		later:   map[string]string{"stock/doc.go": "// Package stock tracks stock levels.\npackage stock\n"},
		failing: "TestCountBelow",
		fixable: true,
	},
	{
		name: "arithmetic-sign",
		good: map[string]string{
			"go.mod": goMod,
			"ledger/ledger.go": `package ledger

// Entry is one movement of money, in cents.
type Entry struct {
	Credit bool
	Amount int
}

// Balance sums the entries: credits add, debits subtract.
func Balance(entries []Entry) int {
	b := 0
	for _, e := range entries {
		if e.Credit {
			b += e.Amount
		} else {
			b -= e.Amount
		}
	}
	return b
}
`,
			"ledger/ledger_test.go": `package ledger

import "testing"

func TestBalance(t *testing.T) {
	got := Balance([]Entry{{Credit: true, Amount: 500}, {Amount: 200}})
	if got != 300 {
		t.Fatalf("Balance = %d, want 300", got)
	}
}
`,
		},
		bug: map[string]string{"ledger/ledger.go": `package ledger

// Entry is one movement of money, in cents.
type Entry struct {
	Credit bool
	Amount int
}

// Balance sums the entries: credits add, debits subtract.
func Balance(entries []Entry) int {
	b := 0
	for _, e := range entries {
		amount := e.Amount
		if e.Credit {
			b += amount
		} else {
			b += amount
		}
	}
	return b
}
`},
		// The later commit shifts the buggy lines down.
		later: map[string]string{"ledger/ledger.go": `package ledger

// Currency is the ledger's currency.
const Currency = "EUR"

// Entry is one movement of money, in cents.
type Entry struct {
	Credit bool
	Amount int
}

// Balance sums the entries: credits add, debits subtract.
func Balance(entries []Entry) int {
	b := 0
	for _, e := range entries {
		amount := e.Amount
		if e.Credit {
			b += amount
		} else {
			b += amount
		}
	}
	return b
}
`},
		failing: "TestBalance",
		fixable: true,
	},
	{
		name: "off-by-one-constant",
		good: map[string]string{
			"go.mod": goMod,
			"paging/paging.go": `package paging

// Pages is how many pages of size per the items fill.
func Pages(items, per int) int {
	if per <= 0 {
		return 0
	}
	return (items + per - 1) / per
}
`,
			"paging/paging_test.go": `package paging

import "testing"

func TestPages(t *testing.T) {
	for _, tc := range []struct{ items, per, want int }{{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}} {
		if got := Pages(tc.items, tc.per); got != tc.want {
			t.Errorf("Pages(%d, %d) = %d, want %d", tc.items, tc.per, got, tc.want)
		}
	}
}
`,
		},
		bug: map[string]string{"paging/paging.go": `package paging

// Pages is how many pages of size per the items fill.
func Pages(items, per int) int {
	if per <= 0 {
		return 0
	}
	return (items + per - 2) / per
}
`},
		later:   map[string]string{"paging/offset.go": "package paging\n\n// Offset is the first item of page p.\nfunc Offset(p, per int) int { return p * per }\n"},
		failing: "TestPages",
		fixable: true,
	},
	{
		name: "inverted-condition",
		good: map[string]string{
			"go.mod": goMod,
			"words/words.go": `package words

import "strings"

// WithPrefix keeps the words that start with prefix.
func WithPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
`,
			"words/words_test.go": `package words

import (
	"reflect"
	"testing"
)

func TestWithPrefix(t *testing.T) {
	got := WithPrefix([]string{"apple", "banana", "apricot"}, "ap")
	if want := []string{"apple", "apricot"}; !reflect.DeepEqual(got, want) {
		t.Errorf("WithPrefix = %q, want %q", got, want)
	}
}
`,
		},
		bug: map[string]string{"words/words.go": `package words

import "strings"

// WithPrefix keeps the words that start with prefix.
func WithPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if !strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
`},
		later:   map[string]string{"README.md": "# shop\n"},
		failing: "TestWithPrefix",
		fixable: true,
	},
	{
		name: "multi-line-hunk",
		good: map[string]string{
			"go.mod": goMod,
			"stats/stats.go": `package stats

// Mean is the average of xs, 0 for none.
func Mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}
`,
			"stats/stats_test.go": `package stats

import "testing"

func TestMean(t *testing.T) {
	if got := Mean([]int{1, 2}); got != 1.5 {
		t.Errorf("Mean = %v, want 1.5", got)
	}
}
`,
		},
		bug: map[string]string{"stats/stats.go": `package stats

// Mean is the average of xs, 0 for none.
func Mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	mean := sum / len(xs)
	return float64(mean)
}
`},
		later:   map[string]string{"stats/median.go": "package stats\n\n// Middle is the middle element of sorted xs.\nfunc Middle(xs []int) int { return xs[len(xs)/2] }\n"},
		failing: "TestMean",
		fixable: true,
	},
	{
		// The function was always wrong; the blame commit only added the
		// test that shows it. No template can write a primality test.
		name: "wrong-algorithm",
		good: map[string]string{
			"go.mod": goMod,
			"num/num.go": `package num

// IsPrime reports whether n is prime.
func IsPrime(n int) bool {
	if n < 2 {
		return false
	}
	return n == 2 || n%2 == 1
}
`,
			"num/num_test.go": `package num

import "testing"

func TestIsPrimeSmall(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7} {
		if !IsPrime(n) {
			t.Errorf("IsPrime(%d) = false", n)
		}
	}
}
`,
		},
		bug: map[string]string{"num/num_test.go": `package num

import "testing"

func TestIsPrimeSmall(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7} {
		if !IsPrime(n) {
			t.Errorf("IsPrime(%d) = false", n)
		}
	}
}

func TestIsPrimeComposite(t *testing.T) {
	for _, n := range []int{1, 4, 9, 15, 21, 25} {
		if IsPrime(n) {
			t.Errorf("IsPrime(%d) = true", n)
		}
	}
}
`},
		later:   map[string]string{"num/doc.go": "// Package num has number helpers.\npackage num\n"},
		failing: "TestIsPrimeComposite",
		fixable: false,
	},
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// build makes the scenario's repository and the task triage would hand over.
func (sc scenario) build(t *testing.T, ctx context.Context) (string, task.Task) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, sc.good)
	good, err := repo.CommitAll(ctx, "Add the "+sc.name+" package")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, sc.bug)
	const subject = "Tidy up and extend"
	blame, err := repo.CommitAll(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, sc.later)
	head, err := repo.CommitAll(ctx, "Unrelated follow-up")
	if err != nil {
		t.Fatal(err)
	}
	out, err := testrun.Runner{Timeout: 2 * time.Minute}.Run(ctx, dir, []string{sc.failing}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) == 0 {
		t.Fatalf("%s does not fail at the head: %s", sc.failing, out.Summary())
	}
	return dir, task.Task{
		ID: "task-" + sc.name, Repo: dir, Commit: head, Failures: out.Failed,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: good, Bad: head, Blame: blame, Subject: subject, Steps: 2},
		Status:    task.StatusRunning,
	}
}

func TestRepairs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in real repositories")
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			dir, tk := sc.build(t, ctx)
			ws, err := workspace.Open(ctx, dir, tk.Commit, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			const maxSteps = 40
			res, steps := runEpisode(t, ctx, ws, tk, offline.New(zaptest.NewLogger(t)), maxSteps)
			for _, s := range steps {
				t.Logf("%2d %-16s %s", s.N, s.Action.Name, s.Action.Thought)
			}
			t.Logf("stop=%s steps=%d passed=%v\nsummary: %s\npatch:\n%s", res.Stop, res.Steps, res.TestsPassed, res.Summary, res.Patch)
			if res.Steps > maxSteps {
				t.Errorf("took %d steps, budget %d", res.Steps, maxSteps)
			}
			if res.Stop != "exit" {
				t.Errorf("stopped by %q, want the policy's exit", res.Stop)
			}
			for _, s := range steps {
				if s.Action.Name != harness.ActExit && strings.TrimSpace(s.Action.Thought) == "" {
					t.Errorf("step %d (%s) has no thought", s.N, s.Action.Name)
				}
			}
			// The oracle, run here on the patched workspace.
			out, err := testrun.Runner{Timeout: 2 * time.Minute}.Run(ctx, ws.Dir, []string{sc.failing}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.fixable {
				if res.TestsPassed || out.OK() {
					t.Errorf("an unfixable bug passed: %s", res.Patch)
				}
				if strings.TrimSpace(res.Patch) != "" {
					t.Errorf("left a patch behind:\n%s", res.Patch)
				}
				if !strings.Contains(res.Summary, "No candidate passed") {
					t.Errorf("summary = %q", res.Summary)
				}
				return
			}
			if !out.OK() {
				t.Fatalf("%s still fails after the patch: %s\n%s", sc.failing, out.Summary(), out.Output)
			}
			if !res.TestsPassed || res.Patch == "" {
				t.Errorf("result: passed=%v patch=%q", res.TestsPassed, res.Patch)
			}
			if strings.Contains(res.Patch, "_test.go") {
				t.Errorf("the patch edits a test:\n%s", res.Patch)
			}
			// Whole package still green: no regression.
			all, err := testrun.Runner{Timeout: 2 * time.Minute}.RunPackages(ctx, ws.Dir, []string{"./..."})
			if err != nil {
				t.Fatal(err)
			}
			if !all.OK() {
				t.Errorf("regressions after the patch: %s", all.Summary())
			}
		})
	}
}

func TestNewEpisodeResets(t *testing.T) {
	p := offline.New(zaptest.NewLogger(t))
	ctx := context.Background()
	ep := &harness.Episode{Task: task.Task{ID: "a", Failures: []task.Failure{{Test: "TestX"}}}, MaxSteps: 40}
	a, err := p.Next(ctx, ep)
	if err != nil || a.Name != harness.ActGetTaskDetails {
		t.Fatalf("first action = %v, %v", a.Name, err)
	}
	ep.Steps = append(ep.Steps, harness.Step{N: 1, Action: a, Observation: harness.Observation{Content: "task"}})
	a, _ = p.Next(ctx, ep)
	if a.Name != harness.ActRunTests { // no blame commit: straight to reproducing
		t.Fatalf("second action = %v", a.Name)
	}
	// A new episode starts over.
	ep2 := &harness.Episode{Task: task.Task{ID: "b"}, MaxSteps: 40}
	if a, _ := p.Next(ctx, ep2); a.Name != harness.ActGetTaskDetails {
		t.Fatalf("new episode's first action = %v", a.Name)
	}
}
