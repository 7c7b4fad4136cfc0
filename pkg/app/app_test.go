package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// clearEnv makes the test independent of the machine's configuration.
func clearEnv(t *testing.T) {
	for _, k := range []string{"REDFIX_NATS_URL", "REDFIX_REDIS_ADDR", "REDFIX_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "REDFIX_LLM_BASE_URL", "REDFIX_LLM_API_KEY", "REDFIX_CONFIG", "REDFIX_DATA_DIR", "REDFIX_PUBLISH_DIR"} {
		t.Setenv(k, "")
	}
	// Each test writes its repositories in new directories: one build
	// cache for all of them keeps the sandbox's builds warm.
	t.Setenv("REDFIX_SANDBOX_GO_CACHE", "shared")
}

// breakingCommit finds the sample's commit that broke the test, by its
// subject, independently of what redfix found.
func breakingCommit(t *testing.T, repo string) string {
	t.Helper()
	out, err := gitrepo.Repo{Dir: repo}.Git(context.Background(), "log", "--format=%H", "--grep=keep tiers sorted", "main")
	if err != nil || len(strings.Fields(out)) != 1 {
		t.Fatalf("find the breaking commit: %q, %v", out, err)
	}
	return strings.TrimSpace(out)
}

// goTestPasses checks out rev in a worktree of repo and runs go test ./...
func goTestPasses(t *testing.T, repo, rev string) bool {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "wt")
	r := gitrepo.Repo{Dir: repo}
	if _, err := r.Git(ctx, "worktree", "add", "-q", "--detach", dir, rev); err != nil {
		t.Fatal(err)
	}
	defer r.Git(ctx, "worktree", "remove", "--force", dir) //nolint:errcheck
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "test", "-count=1", "./..."}, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res.OK()
}

type prDir struct {
	dir, body, patch, trajectory string
	gates                        []task.Gate
}

func readPR(t *testing.T, out string) prDir {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "redfix-*"))
	if len(dirs) != 1 {
		t.Fatalf("want one pull-request directory under %s, got %v", out, dirs)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pr := prDir{dir: dirs[0], body: read("pull_request.md"), patch: read("patch.diff"), trajectory: read("trajectory.jsonl")}
	if err := json.Unmarshal([]byte(read("gates.json")), &pr.gates); err != nil {
		t.Fatalf("gates.json: %v", err)
	}
	return pr
}

func gate(gates []task.Gate, name string) string {
	for _, g := range gates {
		if g.Name == name {
			return g.Verdict
		}
	}
	return "missing"
}

// checkPublished asserts what a repair of the Go sample in repo must leave
// behind: one pull request under out naming the breaking commit, and a
// branch of repo that turns the failing default branch green.
func checkPublished(t *testing.T, repo, out string) prDir {
	t.Helper()
	blame := breakingCommit(t, repo)
	pr := readPR(t, out)
	if !strings.Contains(pr.body, blame[:12]) {
		t.Errorf("pull_request.md does not name the breaking commit %s", blame[:12])
	}
	if !strings.Contains(pr.patch, "qty >= t.MinQty") {
		t.Errorf("patch does not fix the boundary:\n%s", pr.patch)
	}
	lines := strings.Split(strings.TrimSpace(pr.trajectory), "\n")
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("trajectory line %d is not JSON: %s", i+1, l)
		}
	}
	branch := "redfix/" + strings.TrimPrefix(filepath.Base(pr.dir), "redfix-")
	if _, err := (gitrepo.Repo{Dir: repo}).Resolve(context.Background(), branch); err != nil {
		t.Fatalf("branch %s: %v", branch, err)
	}
	if goTestPasses(t, repo, "main") {
		t.Error("go test ./... passes at main: the demo has no failure to fix")
	}
	if !goTestPasses(t, repo, branch) {
		t.Errorf("go test ./... fails at %s", branch)
	}
	for _, g := range []string{"integrity", "revert", "static", "oracle", "regression"} {
		if v := gate(pr.gates, g); v != task.GatePass {
			t.Errorf("gate %s: %s", g, v)
		}
	}
	return pr
}

// bot demo, offline and with --serve: the Go sample's failure goes through
// every stage, printed, and is published with a branch that turns go test
// green; then the dashboard the demo keeps up shows it in a real browser.
// One demo run for all of it.
func TestDemoOfflineEndToEnd(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	out := filepath.Join(t.TempDir(), "out")
	go func() { done <- Demo(ctx, []string{"--out", out, "--serve", "127.0.0.1:0"}, &stdout, &stderr) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("demo: %v", err)
		}
	}()
	url := dashboardURL(t, &stdout, &stderr, done)

	t.Run("published", func(t *testing.T) {
		for _, stage := range []string{"ingest", "triage", "workspace", "agent", "gate", "publish", "verify"} {
			if !strings.Contains(stdout.String(), "] "+stage) {
				t.Errorf("stage %q was not printed:\n%s", stage, stdout.String())
			}
		}
		pr := checkPublished(t, filepath.Join(out, "repo"), out)
		if v := gate(pr.gates, "judge"); v != task.GateNotRun {
			t.Errorf("judge with no model configured: %s, want not_run", v)
		}
		if !strings.Contains(pr.trajectory, `"policy":"offline"`) {
			t.Error("trajectory is not the offline policy's")
		}
	})
	t.Run("dashboard in a browser", func(t *testing.T) { checkDashboardInBrowser(t, url) })
	t.Run("a second demo into the same directory is refused", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if err := Demo(context.Background(), []string{"--out", out}, &stdout, &stderr); err == nil {
			t.Error("a demo into a non-empty directory succeeded")
		}
	})
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// bot triage finds the commit that broke the demo's test: reliable,
// bisected, blamed on the breaking commit, with the fields a user reads in
// --json and no progress lines on a stderr that is no terminal. With Redis
// configured it keeps its runs there: a second search of the same failure
// reuses them, and a Redis that does not answer is an error, not a search
// without it.
func TestTriageCommandFindsTheBreakingCommit(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	rs, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	t.Setenv("REDFIX_REDIS_ADDR", rs.Addr())
	t.Setenv("REDFIX_REDIS_PASSWORD", rs.Password())
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	search := func() (triage.Verdict, map[string]any) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := TriageCommand(ctx, []string{"--repo", s.Dir, "--good", s.Good, "--bad", "HEAD", "--test", "TestVolumeDiscount/at_threshold", "--json"}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("triage: %v\n%s", err, stderr.String())
		}
		// The test runs' progress lines are for a terminal only.
		if strings.Contains(stderr.String(), "test run") {
			t.Errorf("progress lines on a stderr that is no terminal:\n%s", stderr.String())
		}
		var v triage.Verdict
		if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
			t.Fatalf("--json output: %v\n%s", err, stdout.String())
		}
		if v.Flakiness.Verdict != "reliable" || v.Bisection == nil || v.Bisection.Blame != s.Commits[3] || v.Fingerprint == "" || v.TestRuns == 0 {
			t.Fatalf("verdict = %+v, want reliable, blamed on %s", v, s.Commits[3])
		}
		var fields map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &fields); err != nil {
			t.Fatal(err)
		}
		return v, fields
	}
	first, fields := search()
	// The fields a user reads: one-word verdict, confidence, runs spent and
	// reused (none, from an empty Redis).
	if fields["verdict"] != "reliable" || fields["confidence"].(float64) < bisect.DefaultConfidence || fields["runs_spent"].(float64) < 1 || fields["cached_runs"] != 0.0 {
		t.Errorf("--json fields: verdict %v confidence %v runs_spent %v cached_runs %v", fields["verdict"], fields["confidence"], fields["runs_spent"], fields["cached_runs"])
	}
	if first.CachedRuns != 0 {
		t.Errorf("first search reused %d runs from an empty Redis", first.CachedRuns)
	}
	second, _ := search()
	if second.CachedRuns == 0 || second.Bisection.Steps >= first.Bisection.Steps {
		t.Errorf("second search: %d cached runs, %d bisection runs (first: %d); want the first's runs reused", second.CachedRuns, second.Bisection.Steps, first.Bisection.Steps)
	}
	var stdout, stderr bytes.Buffer
	if err := TriageCommand(ctx, []string{"--repo", s.Dir}, &stdout, &stderr); ExitCode(err) != 2 {
		t.Fatalf("no --test: %v", err)
	}
	// A Redis that does not answer is an error, not a search without it.
	rs.Close()
	if err := TriageCommand(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "redis at") {
		t.Errorf("Redis gone: %v", err)
	}
}

// bot repair with a model configured (a scripted one over HTTP): the LLM
// policy repairs the Go sample from the real observations of its edit and
// test run, the judge is shown the patch and accepts it, every gate
// passes, and the branch turns go test green. A test that passes is
// nothing to repair; a directory that is no repository is refused.
func TestRepairCommandUsesTheLLMPolicyAndJudge(t *testing.T) {
	clearEnv(t)
	blocks := "<<<<<<< SEARCH\n\t\tif qty > t.MinQty {\n=======\n\t\tif qty >= t.MinQty {\n>>>>>>> REPLACE\n"
	editArgs, _ := json.Marshal(map[string]string{"path": "pricing/pricing.go", "blocks": blocks})
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: "Look at the task first.", ToolCalls: []llm.ToolCall{call("c1", "get_task_details", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c2", "get_diff_details", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c3", "read_file", `{"path":"pricing/pricing.go"}`)}},
		llmtest.Reply{Content: "The refactor changed >= into >.", ToolCalls: []llm.ToolCall{call("c4", "edit", string(editArgs))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c5", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c6", "exit", `{"summary":"Restored the inclusive tier threshold that the refactor made exclusive."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Restores the documented at-least semantics of MinQty; minimal and on the blamed line."}`},
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("REDFIX_MODEL", "test-model")
	ctx := context.Background()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	if err := Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--blame", s.Commits[3], "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("repair: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	pr := checkPublished(t, s.Dir, out)
	if !strings.Contains(pr.body, s.Commits[3][:12]) {
		t.Errorf("the pull request does not name the blame commit:\n%s", pr.body)
	}
	if v := gate(pr.gates, "judge"); v != task.GatePass {
		t.Errorf("judge: %s, want pass", v)
	}
	if !strings.Contains(pr.trajectory, `"policy":"llm:test-model"`) {
		t.Error("trajectory is not the LLM policy's")
	}
	reqs := srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("model got %d requests, want 6 agent turns and 1 judgement", len(reqs))
	}
	// The model saw the real observation of its edit and test run, and the
	// judge saw the patch.
	last := reqs[5].Messages
	if obs := last[len(last)-1]; obs.Role != "tool" || obs.ToolCallID != "c5" || !strings.Contains(obs.Text(), "passed") {
		t.Errorf("run_tests observation sent to the model: %+v %q", obs, obs.Text())
	}
	judged := reqs[6].Messages
	if !strings.Contains(judged[len(judged)-1].Text(), "qty >= t.MinQty") {
		t.Error("the judge was not shown the patch")
	}

	// A test that passes at HEAD is nothing to repair, and says so.
	err = Repair(ctx, []string{"--repo", s.Dir, "--test", "TestQuote", "--out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "nothing to repair") {
		t.Fatalf("repair of a passing test: %v", err)
	}
	if err := Repair(ctx, []string{"--repo", t.TempDir(), "--test", "TestX"}, &stdout, &stderr); err == nil {
		t.Fatal("repair of a directory that is not a repository succeeded")
	}
}

func TestExitCodes(t *testing.T) {
	for err, want := range map[error]int{nil: 0, Usage("x"): 2, ErrNoPatch: 3, errors.New("boom"): 1} {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestBenchBisectPrintsTheTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := BenchBisect(context.Background(), []string{"--trials", "3"}, &stdout, &stderr); err != nil {
		t.Fatalf("bench-bisect: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	rows := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| commits") {
			rows++
		}
	}
	// 3 lengths × 4 flake rates × test present or added after good.
	if rows != 24 || !strings.Contains(stdout.String(), "| 1024 | 20% | yes | 3 |") {
		t.Errorf("table has %d rows:\n%s", rows, stdout.String())
	}
	// Under it, each flake rate's histories added up, the reproduction's
	// runs counted (triage's plan: 2 of its 5 re-runs come first), then
	// tests flaky everywhere under the same plan.
	for _, want := range []string{"At 10% flakes: right in ", "(2.0 of them reproducing at bad)", "A test failing 50% of its runs at every commit (256 commits, 3 trials)", "a culprit needing evidence 32 to 1"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in:\n%s", want, stdout.String())
		}
	}
	// Its progress is for a terminal: nothing on a stderr that is not one.
	if stderr.Len() != 0 {
		t.Errorf("bench-bisect wrote to a stderr that is no terminal: %q", stderr.String())
	}
	if err := BenchBisect(context.Background(), []string{"--trials", "0"}, &stdout, &stderr); ExitCode(err) != 2 {
		t.Errorf("--trials 0: %v", err)
	}
	if err := BenchBisect(context.Background(), []string{"--reruns", "0"}, &stdout, &stderr); ExitCode(err) != 2 {
		t.Errorf("--reruns 0: %v", err)
	}
	// The older plan, every re-run first.
	stdout.Reset()
	if err := BenchBisect(context.Background(), []string{"--trials", "2", "--reproduce", "5"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "(5.0 of them reproducing at bad)") {
		t.Errorf("--reproduce 5: %v\n%s", err, stdout.String())
	}
}
