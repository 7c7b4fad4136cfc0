package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
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
	"github.com/redfix/redfix/pkg/unidiff"
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
		// The blame hunk sits past what one read_file shows of a long file.
		name: "long-file",
		good: map[string]string{
			"go.mod":           goMod,
			"orders/limits.go": longSource("q <= hi"),
			"orders/limits_test.go": `package orders

import "testing"

func TestInRange(t *testing.T) {
	if !InRange(5, 1, 5) {
		t.Errorf("InRange(5, 1, 5) = false")
	}
}
`,
		},
		bug:     map[string]string{"orders/limits.go": longSource("q < hi")},
		later:   map[string]string{"orders/doc.go": "// Package orders checks orders.\npackage orders\n"},
		failing: "TestInRange",
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

// longSource is a Go file of some 400 lines whose last function, InRange,
// compares with upper.
func longSource(upper string) string {
	var b strings.Builder
	b.WriteString("package orders\n")
	for i := 1; i <= 130; i++ {
		fmt.Fprintf(&b, "\n// Limit%03d is limit number %d.\nfunc Limit%03d() int { return %d }\n", i, i, i, i)
	}
	fmt.Fprintf(&b, "\n// InRange reports whether q is within [lo, hi].\nfunc InRange(q, lo, hi int) bool {\n\treturn q >= lo && %s\n}\n", upper)
	return b.String()
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

// runEpisode runs one episode of tk in ws through the production loop, with
// policy p, and returns the result and the steps read back from the
// trajectory.
func runEpisode(t *testing.T, ctx context.Context, ws *workspace.Workspace, tk task.Task, p harness.Policy) (harness.Result, []harness.Step) {
	t.Helper()
	var traj bytes.Buffer
	log := zaptest.NewLogger(t)
	h := harness.New(harness.Config{MaxSteps: maxSteps}, p, testrun.Runner{Timeout: 2 * time.Minute}, nil, log)
	res, err := h.Run(ctx, ws, tk, &traj)
	if err != nil {
		t.Fatalf("episode of %s: %v (result %+v)", tk.ID, err, res)
	}
	var steps []harness.Step
	for i, line := range strings.Split(strings.TrimSuffix(traj.String(), "\n"), "\n") {
		if line == "" {
			t.Fatalf("trajectory line %d is empty:\n%s", i+1, traj.String())
		}
		var s harness.Step
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("trajectory line %d is not a step: %v\n%s", i+1, err, line)
		}
		if s.N != i+1 || s.Policy != p.Name() {
			t.Errorf("trajectory line %d: step %d by %q", i+1, s.N, s.Policy)
		}
		steps = append(steps, s)
	}
	if len(steps) != res.Steps {
		t.Errorf("trajectory has %d lines for %d steps", len(steps), res.Steps)
	}
	return res, steps
}

const maxSteps = 40

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
			res, steps := runEpisode(t, ctx, ws, tk, offline.New(zaptest.NewLogger(t)))
			for _, s := range steps {
				t.Logf("%2d %-16s err=%-5v %s", s.N, s.Action.Name, s.Observation.IsError, s.Action.Thought)
			}
			t.Logf("stop=%s steps=%d passed=%v\nsummary: %s\npatch:\n%s", res.Stop, res.Steps, res.TestsPassed, res.Summary, res.Patch)
			checkSteps(t, steps)
			if res.Steps > maxSteps {
				t.Errorf("took %d steps, budget %d", res.Steps, maxSteps)
			}
			if res.Stop != harness.StopExit {
				t.Errorf("stopped by %q, want the policy's exit", res.Stop)
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
			if !res.TestsPassed || strings.TrimSpace(res.Patch) == "" {
				t.Errorf("result: passed=%v patch=%q", res.TestsPassed, res.Patch)
			}
			if !strings.HasPrefix(res.Summary, "Changed ") && !strings.HasPrefix(res.Summary, "In ") {
				t.Errorf("summary of a fix = %q", res.Summary)
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

// checkSteps checks what the policy assumes of the real tools'
// observations, step by step, as the trajectory holds them.
func checkSteps(t *testing.T, steps []harness.Step) {
	t.Helper()
	for i, s := range steps {
		a, obs := s.Action, s.Observation
		if a.Name != harness.ActExit && strings.TrimSpace(a.Thought) == "" {
			t.Errorf("step %d (%s) has no thought", s.N, a.Name)
		}
		if strings.HasPrefix(obs.Content, "Not run: ") {
			t.Errorf("step %d (%s) was refused as a repeat: %s", s.N, a.Name, obs.Content)
		}
		if i > 0 && steps[i-1].Action.Name == a.Name && bytes.Equal(steps[i-1].Action.Args, a.Args) {
			t.Errorf("steps %d and %d are the same action %s %s", s.N-1, s.N, a.Name, a.Args)
		}
		switch a.Name {
		case harness.ActReadFile, harness.ActGoToLine:
			if obs.IsError {
				t.Errorf("step %d (%s %s) failed: %s", s.N, a.Name, a.Args, obs.Content)
				continue
			}
			// Every line of the listing is one the policy reads back.
			body := strings.Split(strings.TrimSuffix(obs.Content, "\n"), "\n")[1:]
			want := 0
			for _, l := range body {
				if !strings.HasPrefix(l, "[") {
					want++
				}
			}
			if obs.Listing == nil || len(obs.Listing.Lines) == 0 || len(obs.Listing.Lines) != want {
				t.Errorf("step %d (%s): the policy reads %v of the %d listed lines:\n%s", s.N, a.Name, obs.Listing, want, obs.Content)
				continue
			}
			for _, l := range obs.Listing.Lines {
				if !strings.Contains(obs.Content, fmt.Sprintf("%6d\t%s\n", l.N, l.Text)) {
					t.Errorf("step %d (%s): line %d as read, %q, is not as listed", s.N, a.Name, l.N, l.Text)
				}
			}
		case harness.ActGetDiffDetails:
			if obs.IsError || obs.Commit == nil {
				t.Errorf("step %d: no diff: %s", s.N, obs.Content)
			} else if files, _ := unidiff.Parse(obs.Commit.Diff); len(files) == 0 {
				t.Errorf("step %d: the policy reads no diff in:\n%s", s.N, obs.Commit.Diff)
			}
		case harness.ActEdit:
			if obs.Edit == nil {
				t.Errorf("step %d: edit without an EditResult: %s", s.N, obs.Content)
			} else if !obs.Edit.Applied {
				t.Errorf("step %d: edit not applied: %s", s.N, obs.Content)
			}
		case harness.ActRunTests:
			if obs.Tests == nil {
				t.Errorf("step %d: run_tests without a TestsResult: %s", s.N, obs.Content)
			} else if obs.IsError {
				// Failing tests are the tool's answer, not an error.
				t.Errorf("step %d: run_tests ok=%v and is_error: %s", s.N, obs.Tests.OK, obs.Content)
			}
		}
	}
	if n := len(steps); n == 0 || steps[n-1].Action.Name != harness.ActExit {
		t.Errorf("the episode does not end with exit")
	}
}

func scenarioNamed(t *testing.T, name string) scenario {
	t.Helper()
	for _, sc := range scenarios {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return scenario{}
}

// TestPolicyReuse runs episodes of different tasks, one after the other,
// with one Policy value: each must start afresh and fix its own bug.
func TestPolicyReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in real repositories")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := offline.New(zaptest.NewLogger(t))
	for i, name := range []string{"arithmetic-sign", "comparison", "arithmetic-sign"} {
		sc := scenarioNamed(t, name)
		dir, tk := sc.build(t, ctx)
		ws, err := workspace.Open(ctx, dir, tk.Commit, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		res, steps := runEpisode(t, ctx, ws, tk, p)
		ws.Close()
		t.Logf("episode %d (%s): stop=%s steps=%d passed=%v", i+1, name, res.Stop, res.Steps, res.TestsPassed)
		checkSteps(t, steps)
		if steps[0].Action.Name != harness.ActGetTaskDetails {
			t.Errorf("episode %d (%s) starts with %s, not with the task", i+1, name, steps[0].Action.Name)
		}
		if res.Stop != harness.StopExit || !res.TestsPassed {
			t.Errorf("episode %d (%s): stop=%s passed=%v summary=%q", i+1, name, res.Stop, res.TestsPassed, res.Summary)
		}
		var file string
		for f := range sc.bug {
			file = f
		}
		if !strings.Contains(res.Patch, "+++ b/"+file) || strings.Count(res.Patch, "+++ ") != 1 {
			t.Errorf("episode %d (%s) patches other than %s:\n%s", i+1, name, file, res.Patch)
		}
		// Nothing of the episode before: no hypothesis numbering carried
		// over, no file of the other task touched.
		for _, s := range steps {
			var args struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(s.Action.Args, &args)
			if args.Path != "" && path.Dir(args.Path) != path.Dir(file) {
				t.Errorf("episode %d (%s) step %d acts on %s, outside its task", i+1, name, s.N, args.Path)
			}
		}
		// Each failed candidate is an edit and its undo; the summary counts
		// this episode's only.
		edits := 0
		for _, s := range steps {
			if s.Action.Name == harness.ActEdit {
				edits++
			}
		}
		earlier := fmt.Sprintf(" %d earlier candidate(s)", (edits-1)/2)
		if (edits > 1) != strings.Contains(res.Summary, earlier) || (edits == 1 && strings.Contains(res.Summary, "earlier candidate")) {
			t.Errorf("episode %d (%s) made %d edits; summary: %s", i+1, name, edits, res.Summary)
		}
	}
}
