package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// fixHistory is a module whose second commit fixes a bug and adds the test
// that shows it, and whose third changes code only.
var fixHistory = []map[string]string{
	{
		"go.mod": "module example.com/shop\n\ngo 1.21\n",
		"price.go": `package shop

// Total is the price of n items at unit cents each, with 10% off from 10 items.
func Total(n, unit int) int {
	t := n * unit
	if n > 10 {
		t -= t / 10
	}
	return t
}
`,
		"price_test.go": `package shop

import "testing"

func TestTotalSmall(t *testing.T) {
	if got := Total(2, 100); got != 200 {
		t.Fatalf("Total(2, 100) = %d, want 200", got)
	}
}
`,
	},
	{
		"price.go": `package shop

// Total is the price of n items at unit cents each, with 10% off from 10 items.
func Total(n, unit int) int {
	t := n * unit
	if n >= 10 {
		t -= t / 10
	}
	return t
}
`,
		"discount_test.go": `package shop

import "testing"

func TestTotalDiscountAtTen(t *testing.T) {
	if got := Total(10, 100); got != 900 {
		t.Fatalf("Total(10, 100) = %d, want 900", got)
	}
}
`,
	},
	{
		"doc.go": "// Package shop prices orders.\npackage shop\n",
	},
}

// buildFixHistory writes fixHistory as a repository in dir.
func buildFixHistory(dir string) ([]string, error) {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := gitrepo.Init(ctx, dir)
	if err != nil {
		return nil, err
	}
	var shas []string
	for i, files := range fixHistory {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return nil, err
			}
		}
		sha, err := r.CommitAll(ctx, []string{"start", "Discount from 10 items, as documented", "Package doc"}[i])
		if err != nil {
			return nil, err
		}
		shas = append(shas, sha)
	}
	return shas, nil
}

// minedFix is fixHistory mined once by `bot mine`, for every test that
// needs its task: mining runs the history's tests several times at each
// commit, the same for all of them.
var minedFix struct {
	once           sync.Once
	dir, tasks     string
	shas           []string
	stdout, stderr string
	mineErr, ioErr error
}

// minedFixTasks returns fixHistory's repository, its commits and a copy of
// its mined tasks file in a directory of t's own (each bench keeps its
// results beside its tasks file). Mining is TestMineCommand's to check.
func minedFixTasks(t *testing.T) (dir string, shas []string, tasks string) {
	t.Helper()
	m := &minedFix
	m.once.Do(func() {
		m.dir = filepath.Join(sharedDir(t), "fix-history")
		if m.shas, m.ioErr = buildFixHistory(m.dir); m.ioErr != nil {
			return
		}
		m.tasks = filepath.Join(sharedDir(t), "fix-tasks.jsonl")
		var stdout, stderr bytes.Buffer
		// A steady test runs as many times as --flake-error asks (ten in
		// each direction by default): 0.2 makes it three, the least that
		// still tells a flaky test from a steady one (pkg/bench's tests
		// hold the count to the defaults).
		m.mineErr = Mine(context.Background(), []string{"--repo", m.dir, "--out", m.tasks, "--flake-error", "0.2"}, &stdout, &stderr)
		m.stdout, m.stderr = stdout.String(), stderr.String()
	})
	if m.ioErr != nil {
		t.Fatal(m.ioErr)
	}
	if m.mineErr != nil {
		t.Fatalf("mine: %v\n%s\n%s", m.mineErr, m.stdout, m.stderr)
	}
	data, err := os.ReadFile(m.tasks)
	if err != nil {
		t.Fatal(err)
	}
	tasks = filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(tasks, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return m.dir, m.shas, tasks
}

func TestMineCommand(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if err := Mine(ctx, []string{"--repo", "."}, &stdout, &stderr); ExitCode(err) != 2 || !strings.Contains(err.Error(), "--out") {
		t.Fatalf("no --out: %v", err)
	}

	_, shas, out := minedFixTasks(t)
	for _, want := range []string{
		"3 commits on the first-parent line; 1 run with tests; 1 qualified",
		"skipped: code-only 1; root-commit 1",
		shas[1][:12] + " qualified",
	} {
		if !strings.Contains(minedFix.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, minedFix.stdout)
		}
	}
	tasks, err := bench.ReadTasksFile(out)
	if err != nil || len(tasks) != 1 || tasks[0].Tests[0] != "example.com/shop.TestTotalDiscountAtTen" {
		t.Fatalf("tasks: %+v, %v", tasks, err)
	}
}

// The offline policy on a mined task, through the real pipeline and gates:
// solved, published, the same change as the person's fix; the JSON and the
// HTML report say so, and a second bench replays nothing.
func TestBenchCommandOffline(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if err := Bench(ctx, []string{"--policy", "offline"}, &stdout, &stderr); ExitCode(err) != 2 || !strings.Contains(err.Error(), "--tasks") {
		t.Fatalf("no --tasks: %v", err)
	}
	if err := Bench(ctx, []string{"--tasks", "x.jsonl", "--policy", "llm"}, &stdout, &stderr); ExitCode(err) != 2 || !strings.Contains(err.Error(), "needs a model") {
		t.Fatalf("llm without a model: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"a\",\"repo\":\".\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Bench(ctx, []string{"--tasks", bad}, &stdout, &stderr); ExitCode(err) != 2 || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "missing base, tests") {
		t.Fatalf("bad task: %v", err)
	}

	_, _, tasks := minedFixTasks(t)
	tmp := filepath.Dir(tasks)
	stdout.Reset()
	html := filepath.Join(tmp, "report.html")
	if err := Bench(ctx, []string{"--tasks", tasks, "--policy", "offline", "--json", "--html", html}, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var got struct {
		Summary bench.Summary  `json:"summary"`
		Tasks   []bench.Result `json:"tasks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	if got.Summary.Tasks != 1 || got.Summary.SR1 != 1 || got.Summary.Published != 1 || got.Summary.Precision == nil || *got.Summary.Precision != 1 {
		t.Fatalf("summary: %+v", got.Summary)
	}
	ep := got.Tasks[0].Samples[0]
	if !ep.Solved || ep.Golden != "same" || ep.Steps == 0 || !strings.Contains(ep.Patch, "n >= 10") || ep.Trajectory == "" {
		t.Errorf("episode: %+v", ep)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "run_tests") || !strings.Contains(string(page), ep.Trajectory) {
		t.Errorf("HTML report (%v) lacks the trajectory", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, filepath.FromSlash(ep.Trajectory))); err != nil {
		t.Errorf("trajectory file: %v", err)
	}

	stdout.Reset()
	if err := Bench(ctx, []string{"--tasks", tasks, "--policy", "offline"}, &stdout, &stderr); err != nil {
		t.Fatalf("second bench: %v", err)
	}
	if !strings.Contains(stdout.String(), "SR@1 100.0% (1)") || strings.Contains(stdout.String(), "[1/") {
		t.Errorf("second bench replayed the task or lost its result:\n%s", stdout.String())
	}
}

// mine --demo writes the demo's failure as a task, with the blame commit
// triage's bisection finds, which is the commit that broke it.
func TestMineDemoTask(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "demo.jsonl")
	var stdout, stderr bytes.Buffer
	if err := Mine(ctx, []string{"--demo", "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("mine --demo: %v\n%s", err, stderr.String())
	}
	tasks, err := bench.ReadTasksFile(out)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %+v %v", tasks, err)
	}
	tk := tasks[0]
	if tk.Repo != out+".repo" || len(tk.Tests) != 1 || !strings.Contains(tk.Tests[0], "TestVolumeDiscount") {
		t.Errorf("task: %+v", tk)
	}
	if broke := breakingCommit(t, tk.Repo); tk.Blame != broke {
		t.Errorf("blame %s, want the breaking commit %s", tk.Blame, broke)
	}
	if err := Mine(ctx, []string{"--demo", "--out", out}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second mine --demo: %v", err)
	}
}

// Against a scripted model over real HTTP: two episodes of the LLM policy
// and its judge on a mined task. The first fixes it as the person did and
// the judge accepts; the second fixes it differently and the judge rejects
// it: solved at 1 and at 2, one publication, right, and one right patch
// held back, with the agent's model calls and tokens counted (the
// judge's are not metered by the pipeline).
func TestBenchCommandScriptedModel(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	_, _, tasks := minedFixTasks(t)
	var stdout, stderr bytes.Buffer
	edit := func(to string) string {
		b, _ := json.Marshal(map[string]string{"path": "price.go", "blocks": "<<<<<<< SEARCH\n\tif n > 10 {\n=======\n\tif " + to + " {\n>>>>>>> REPLACE\n"})
		return string(b)
	}
	srv := llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a1", "read_file", `{"path":"price.go"}`)}},
		llmtest.Reply{Content: "The discount starts at 10, not after it.", ToolCalls: []llm.ToolCall{call("a2", "edit", edit("n >= 10"))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a3", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a4", "exit", `{"summary":"The discount applies from 10 items, as documented."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Matches the documented threshold."}`},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("b1", "edit", edit("n > 9"))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("b2", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("b3", "exit", `{"summary":"Lowered the threshold."}`)}},
		llmtest.Reply{Content: `{"acceptable": false, "reason": "n > 9 hides the documented threshold of 10."}`},
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("REDFIX_MODEL", "test-model")
	t.Setenv("REDFIX_FEEDBACK_ROUNDS", "0")

	stdout.Reset()
	if err := Bench(ctx, []string{"--tasks", tasks, "--k", "2", "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var got struct {
		Summary bench.Summary  `json:"summary"`
		Tasks   []bench.Result `json:"tasks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	s := got.Summary
	if s.Policy != "llm:test-model" || s.SR1 != 1 || s.SRK != 1 || s.Published != 1 || s.PublishedSolved != 1 || s.SolvedUnpublished != 1 ||
		s.RejectedBy["judge"] != 1 || s.Golden["same"] != 1 || s.Golden["differs"] != 1 || s.Calls != 9 || s.Tokens == 0 {
		t.Fatalf("summary: %+v\n%s", s, stdout.String())
	}
	// Every request is metered: the agent's seven and the judge's two.
	if n := len(srv.Requests()); n != 9 {
		t.Errorf("the model got %d requests, want 9", n)
	}
	if _, err := os.Stat(strings.TrimSuffix(tasks, ".jsonl") + ".llm-test-model.results.jsonl"); err != nil {
		t.Errorf("results file: %v", err)
	}
}
