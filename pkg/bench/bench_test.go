package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// scripted stands in for the pipeline: each call makes the next of its
// edits in a real checkout of the task and reports the diff, published or
// rejected as told. It lets the scoring be tested on patches of known
// rightness.
type scripted struct {
	mu    sync.Mutex
	calls int
	steps []scriptedStep
	seen  []task.Task
	// logs and hasTest are what the first checkout showed: its whole
	// history, and whether the fix's test file was there.
	logs    string
	hasTest bool
}

type scriptedStep struct {
	files     map[string]string // path → new content
	published bool
	rejectBy  string
	// revert: no patch, and the agent says only undoing the culprit passed.
	revert bool
	// tested and before: the candidate patches the episode tested, and
	// those before its final one.
	tested, before int
}

func (s *scripted) Repair(ctx context.Context, t task.Task) (worker.Outcome, error) {
	s.mu.Lock()
	st := s.steps[s.calls%len(s.steps)]
	s.calls++
	s.seen = append(s.seen, t)
	s.mu.Unlock()
	ws, err := workspace.Open(ctx, t.Repo, t.Commit, "")
	if err != nil {
		return worker.Outcome{}, err
	}
	defer ws.Close()
	if s.calls == 1 {
		s.logs, _ = ws.Repo.Git(ctx, "log", "--all", "--format=%H %s")
		_, err := os.Stat(filepath.Join(ws.Dir, "add_test.go"))
		s.hasTest = err == nil
	}
	for p, body := range st.files {
		if err := os.WriteFile(filepath.Join(ws.Dir, p), []byte(body), 0o644); err != nil {
			return worker.Outcome{}, err
		}
	}
	patch, err := ws.Repo.Diff(ctx)
	if err != nil {
		return worker.Outcome{}, err
	}
	o := worker.Outcome{Agent: harness.Result{Patch: patch, Steps: 3, Stop: "exit", RevertPasses: st.revert,
		PatchesTested: st.tested, TriedBefore: st.before}, Steps: 3,
		Trajectory: []byte(`{"step":1,"policy":"scripted","action":{"name":"read_file","args":{"path":"calc.go"}},"observation":{"content":"package calc"}}` + "\n")}
	switch {
	case st.published:
		o.Status = task.StatusPublished
		o.Gates = []task.Gate{{Name: "oracle", Verdict: task.GatePass, Detail: "3/3 runs passed for each of example.com/calc.TestAdd", ElapsedMS: 2100}}
	case st.rejectBy != "":
		o.Status, o.Reason = task.StatusNoPatch, "rejected by "+st.rejectBy
		o.Gates = []task.Gate{{Name: st.rejectBy, Verdict: task.GateFail, Detail: "example.com/calc.TestMul failed: Mul(2, 3) = 5, want 6"}}
	default:
		o.Status = task.StatusNoPatch
	}
	return o, nil
}

const fixedCalc = `package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }

// Mul returns a times b.
func Mul(a, b int) int { return a * b }
`

func TestBenchScoresEveryEpisodeOnACleanCopy(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, history[:2])
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	runner := golang.Runner{Timeout: 5 * time.Minute}
	if _, err := Mine(ctx, MineOptions{Repo: dir, Out: out, FlakeError: steadyError, Languages: lang.New(golang.Driver{Tests: runner})}); err != nil {
		t.Fatal(err)
	}
	tasks, err := ReadTasksFile(out)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("mined: %v %v", tasks, err)
	}

	rep := &scripted{steps: []scriptedStep{
		// The right fix, published: a solved episode, the golden change.
		// Found third (two candidates tested before it).
		{files: map[string]string{"calc.go": fixedCalc}, published: true, tested: 3, before: 2},
		// The test edited to pass: published by a lax gate, not solved.
		{files: map[string]string{"add_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"}, published: true, tested: 1},
		// Right for Add, but Mul broken: rejected by the regression gate.
		{files: map[string]string{"calc.go": strings.Replace(fixedCalc, "a * b", "a + b", 1)}, rejectBy: "regression", tested: 4, before: 4},
	}}
	results := filepath.Join(t.TempDir(), "results.jsonl")
	r := &Runner{Repairer: rep, Policy: "scripted", Languages: lang.New(golang.Driver{Tests: runner}), K: 3, Results: results}
	res, err := r.Run(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Error != "" || len(res[0].Samples) != 3 {
		t.Fatalf("results: %+v", res)
	}
	s := res[0].Samples
	if !s[0].Solved || s[0].Golden != "same" || !s[0].Published {
		t.Errorf("episode 1: %+v", s[0])
	}
	if s[1].Solved || !strings.Contains(s[1].Score, "changes a test file: add_test.go") {
		t.Errorf("episode 2: %+v", s[1])
	}
	if s[2].Solved || !strings.Contains(s[2].Score, "example.com/calc.TestMul") || s[2].Golden != "differs" || s[2].RejectedBy[0] != "regression" {
		t.Errorf("episode 3: %+v", s[2])
	}
	if !res[0].Solved1 || !res[0].SolvedK {
		t.Errorf("solved at 1 %v, at k %v", res[0].Solved1, res[0].SolvedK)
	}
	// Each episode's candidates tried, as its result counted them, in the
	// results file.
	if s[0].Tried != (Tried{3, 2}) || s[1].Tried != (Tried{1, 0}) || s[2].Tried != (Tried{4, 4}) {
		t.Errorf("tried: %+v %+v %+v", s[0].Tried, s[1].Tried, s[2].Tried)
	}
	if line, _ := os.ReadFile(results); !strings.Contains(string(line), `"patches_tested":3,"tried_before":2`) {
		t.Errorf("the results file lacks the first episode's count:\n%s", line)
	}
	// The agent's checkout holds the fix's tests on the old code, and no
	// trace of the fix in its history.
	if !rep.hasTest {
		t.Error("the task's checkout lacks the fix's test")
	}
	if strings.Contains(rep.logs, shas[1]) || strings.Contains(rep.logs, "Fix Add") || !strings.Contains(rep.logs, shas[0]) {
		t.Errorf("the task's history:\n%s", rep.logs)
	}
	seen := rep.seen[0]
	if len(seen.Failures) != 1 || !strings.Contains(seen.Failures[0].Message, "Add(2, 3) = -1, want 5") {
		t.Errorf("the agent is told %+v", seen.Failures)
	}

	sum := Summarize("scripted", 3, res)
	if sum.SR1 != 1 || sum.Published != 2 || sum.PublishedSolved != 1 || sum.Precision == nil || *sum.Precision != 0.5 ||
		sum.RejectedBy["regression"] != 1 || sum.Golden["same"] != 1 || sum.Steps != 9 || sum.TriedBefore == nil || *sum.TriedBefore != 2 {
		t.Errorf("summary: %+v", sum)
	}
	var table strings.Builder
	if err := WriteTable(&table, res, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SR@1 100.0% (1), SR@3 100.0% (1)", "precision 50.0% (1 right)", "rejected by: regression 1", "2/3 (1 right)",
		"tried before", "2/0✗/4✗", "candidates tried before the right one: 2.0 per solved episode"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if err := WriteHTML(html, filepath.Dir(results), res, tasks, sum); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(html)
	link := filepath.Base(results) + ".d/" + tasks[0].ID + "/episode-1.jsonl"
	if s[0].Trajectory != link {
		t.Errorf("trajectory %q, want %q", s[0].Trajectory, link)
	}
	for _, want := range []string{"read_file", "episode 3", "the golden fix", "func Add(a, b int) int { return a &#43; b }",
		"<th>tried before</th>", "<td>2/0✗/4✗</td>", "3 candidate patch(es) tested, 2 before the final one",
		"the gates' evidence", "<td>oracle</td><td class=\"\">pass</td><td>2.1 s</td><td><pre>3/3 runs passed for each of example.com/calc.TestAdd</pre></td>",
		"<td class=\"err\">fail</td><td></td><td><pre>example.com/calc.TestMul failed: Mul(2, 3) = 5, want 6</pre></td>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}

	// A second run replays nothing: the results are read back, the gates'
	// evidence with them.
	again, err := r.Run(ctx, tasks)
	if err != nil || len(again) != 1 || rep.calls != 3 || !again[0].Solved1 {
		t.Fatalf("second run: %+v %v (%d calls)", again, err, rep.calls)
	}
	if ev := again[0].Samples[2].Evidence; len(ev) != 1 || ev[0].Name != "regression" || !strings.Contains(ev[0].Detail, "Mul(2, 3) = 5") {
		t.Errorf("the rejected episode's gate evidence, read back: %+v", ev)
	}
}

func TestBenchRefusesATaskWhoseTestsPass(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, history[:2])
	rep := &scripted{steps: []scriptedStep{{}}}
	r := &Runner{Repairer: rep, Policy: "scripted", Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}), Results: filepath.Join(t.TempDir(), "r.jsonl")}
	res, err := r.Run(ctx, []Task{{ID: "passes", Repo: dir, Base: shas[1], Tests: []string{"TestAdd"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !strings.Contains(res[0].Error, "do not fail at its commit: example.com/calc.TestAdd") || rep.calls != 0 {
		t.Fatalf("results: %+v", res)
	}
	if sum := Summarize("scripted", 1, res); sum.Tasks != 0 || sum.Errors != 1 {
		t.Errorf("summary: %+v", sum)
	}
}

// A task whose test fails through one subtest while the others pass is a
// valid task; a bench cut short writes no result for the task in flight,
// and the next run replays it.
func TestBenchSubtestsAndInterruption(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, []string{`subtests
-- go.mod --
module example.com/calc

go 1.21
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a - b }
-- calc_test.go --
package calc

import "testing"

func TestAdd(t *testing.T) {
	t.Run("zero", func(t *testing.T) {
		if Add(0, 0) != 0 {
			t.Fatal("Add(0, 0) != 0")
		}
	})
	t.Run("two", func(t *testing.T) {
		if Add(2, 3) != 5 {
			t.Fatal("Add(2, 3) != 5")
		}
	})
}
`})
	tasks := []Task{{ID: "hand-written", Repo: dir, Base: shas[0], Tests: []string{"TestAdd"}}}
	results := filepath.Join(t.TempDir(), "r.jsonl")
	cut, cancel := context.WithCancel(ctx)
	r := &Runner{Repairer: cancelling{cancel}, Policy: "scripted", Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}), Results: results}
	if _, err := r.Run(cut, tasks); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cut short: %v", err)
	}
	if b, _ := os.ReadFile(results); len(b) != 0 {
		t.Fatalf("a result was written for the task in flight: %s", b)
	}

	rep := &scripted{steps: []scriptedStep{{files: map[string]string{"calc.go": "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"}, published: true}}}
	r.Repairer = rep
	res, err := r.Run(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Error != "" || !res[0].Solved1 || res[0].Samples[0].Golden != "no-golden" {
		t.Fatalf("results: %+v", res)
	}
	if f := rep.seen[0].Failures; len(f) != 1 || f[0].Test != "TestAdd/two" {
		t.Errorf("the agent is told %+v", f)
	}
}

// cancelling ends the bench's context as the episode starts, as Ctrl-C
// would.
type cancelling struct{ cancel context.CancelFunc }

func (c cancelling) Repair(ctx context.Context, t task.Task) (worker.Outcome, error) {
	c.cancel()
	<-ctx.Done()
	return worker.Outcome{}, ctx.Err()
}

func TestProgressBarOnATerminalLinesElsewhere(t *testing.T) {
	var b strings.Builder
	p := &bar{w: &b, noun: "commits", width: 100, start: time.Now()}
	p.Total(2)
	p.Step("abc with the fix")
	p.Done("abc qualified", true)
	out := b.String()
	for _, want := range []string{"\r\x1b[K[", "0/2 commits", "abc with the fix", "\r\x1b[Kabc qualified\n", "1/2 commits"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q: %q", want, out)
		}
	}
	var plain strings.Builder
	NewProgress(&plain, "tasks").Done("t1 solved", true)
	if plain.String() != "[1/0] t1 solved\n" {
		t.Errorf("plain progress: %q", plain.String())
	}
}

// A task's second test never runs at its commit because the first panics
// and ends the test binary: it is run on its own, fails, and the task is
// replayed and scored rather than refused.
func TestBenchRunsATestAloneWhenAPanicStoppedIt(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, []string{`a panic hides a failure
-- go.mod --
module example.com/calc

go 1.21
-- calc.go --
package calc

// First returns the first of xs.
func First(xs []int) int { return xs[len(xs)] }

// Add returns a plus b.
func Add(a, b int) int { return a - b }
-- calc_test.go --
package calc

import "testing"

func TestFirst(t *testing.T) {
	if First([]int{4, 5}) != 4 {
		t.Fatal("First([4 5]) != 4")
	}
}

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add(2, 3) != 5")
	}
}
`})
	fixed := "package calc\n\n// First returns the first of xs.\nfunc First(xs []int) int { return xs[0] }\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"
	rep := &scripted{steps: []scriptedStep{{files: map[string]string{"calc.go": fixed}, published: true}}}
	r := &Runner{Repairer: rep, Policy: "scripted", Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}), Results: filepath.Join(t.TempDir(), "r.jsonl")}
	res, err := r.Run(ctx, []Task{{ID: "panics", Repo: dir, Base: shas[0], Tests: []string{"TestFirst", "TestAdd"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Error != "" || !res[0].Solved1 {
		t.Fatalf("results: %+v", res)
	}
	var told []string
	for _, f := range rep.seen[0].Failures {
		told = append(told, f.Test)
	}
	if !slices.Contains(told, "TestFirst") || !slices.Contains(told, "TestAdd") {
		t.Errorf("the agent is told of %v, want TestFirst and TestAdd", told)
	}
}

// An episode that found no fix but that undoing the culprit passes is an
// answer: bench scores the culprit's revert as it scores a patch, and
// counts a task so answered apart from one with no answer. A culprit whose
// revert does not make the tests pass counts for nothing.
func TestBenchCountsARevertAsAnAnswer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, []string{`calc
-- go.mod --
module example.com/calc

go 1.21
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }
-- calc_test.go --
package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}
`, `calc: add Twice, and break Add
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a - b }

// Twice doubles n.
func Twice(n int) int { return 2 * n }
`, `calc: a package comment
-- doc.go --
// Package calc does arithmetic.
package calc
`})
	tasks := []Task{
		{ID: "culprit", Repo: dir, Base: shas[2], Tests: []string{"TestAdd"}, Blame: shas[1]},
		{ID: "innocent", Repo: dir, Base: shas[2], Tests: []string{"TestAdd"}, Blame: shas[2]},
		// No blame, the last good commit: bench bisects, and the agent
		// is shown what the bisection blames.
		{ID: "from-good", Repo: dir, Base: shas[2], Tests: []string{"TestAdd"}, Good: shas[0][:10]},
	}
	rep := &scripted{steps: []scriptedStep{{revert: true}}}
	bis := &fixedBisector{blame: shas[1]}
	r := &Runner{Repairer: rep, Policy: "scripted", Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}), Results: filepath.Join(t.TempDir(), "r.jsonl"), Bisector: bis}
	res, err := r.Run(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].Error != "" || res[1].Error != "" || res[2].Error != "" {
		t.Fatalf("results: %+v", res)
	}
	if bis.good != shas[0] || bis.tests != "TestAdd" || res[2].Bisected != shas[1] || !res[2].RevertOffered {
		t.Errorf("from the good commit: bisected from %q for %q, blamed %q, revert offered %v; want from %s, blame %s, offered", bis.good, bis.tests, res[2].Bisected, res[2].RevertOffered, shas[0], shas[1])
	}
	res = res[:2]
	if s := res[0].Samples[0]; !s.RevertPasses || !s.RevertSolves || res[0].SolvedK || !res[0].RevertOffered {
		t.Errorf("the culprit's revert: %+v (offered %v)", s, res[0].RevertOffered)
	}
	if s := res[1].Samples[0]; !s.RevertPasses || s.RevertSolves || res[1].RevertOffered || !strings.Contains(s.Score, "the culprit's revert: the failing tests do not pass") {
		t.Errorf("a revert that does not fix: %+v", s)
	}
	sum := Summarize("scripted", 1, res)
	if sum.SolvedK != 0 || sum.RevertOffered != 1 {
		t.Errorf("summary: %+v", sum)
	}
	var table strings.Builder
	if err := WriteTable(&table, res, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "1 more answered by a revert") || !strings.Contains(table.String(), "revert") {
		t.Errorf("the table does not show the revert:\n%s", table.String())
	}
}

// fixedBisector blames one commit and remembers what it was asked.
type fixedBisector struct {
	blame       string
	good, tests string
}

func (f *fixedBisector) Bisect(_ context.Context, _, good, bad string, tests []string) (task.Bisection, error) {
	f.good, f.tests = good, strings.Join(tests, ",")
	return task.Bisection{Good: good, Bad: bad, Blame: f.blame}, nil
}

// A task names its blame or its good commit, not both, and one with a
// patch of tests cannot be bisected.
func TestTaskWithAGoodCommit(t *testing.T) {
	t.Parallel()
	base := Task{ID: "a", Repo: ".", Base: "HEAD", Tests: []string{"TestX"}}
	for _, c := range []struct {
		change func(*Task)
		want   string
	}{
		{func(t *Task) { t.Good = "abc" }, ""},
		{func(t *Task) { t.Good, t.Blame = "abc", "def" }, "not both"},
		{func(t *Task) { t.Good, t.TestPatch = "abc", "--- a/x_test.go" }, "in the history"},
	} {
		tk := base
		c.change(&tk)
		err := tk.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", tk, err, c.want)
		}
	}
}
