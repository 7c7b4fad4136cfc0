package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/task"
)

// nodeCase is a Node sample as the pipeline's tests repair it: its
// failing test, the file and method of the bug, the line that breaks and
// the line that fixes it (indented as in the file).
type nodeCase struct {
	lang, failing, testFile, file, method, bug, fix, message string
	// evidence is what each gate's verdict mentions.
	evidence map[string]string
}

var (
	tsCase = nodeCase{
		lang: "typescript", failing: tsAtThreshold, testFile: "src/discount.test.ts",
		file: "src/pricing.ts", method: "discount",
		bug: "      if (qty > t.minQty) {", fix: "      if (qty >= t.minQty) {",
		message:  "expected 10000 to be 9500",
		evidence: map[string]string{"integrity": "no test", "oracle": "node", "regression": "node", "static": "tsc", "judge": "at-least threshold"},
	}
	jsCase = nodeCase{
		lang: "javascript", failing: "src/bulky.test.js::chargeable weight > exactly the threshold over", testFile: "src/bulky.test.js",
		file: "src/rates.js", method: "chargeable",
		bug: "  return v - grams > BULKY ? v : grams;", fix: "  return v - grams >= BULKY ? v : grams;",
		message: "Expected: 4800",
	}
)

// nodeConfig is the default configuration with the node driver's cache
// the tests share and a data directory of the test's own.
func nodeConfig(t *testing.T) config.Config {
	t.Helper()
	nodetest.Require(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Languages.Node.CacheDir = nodetest.CacheDir(t)
	return cfg
}

// sample builds c's sample history through cfg's drivers (its CI run
// through the node driver) and returns it with the task of its failure.
func (c nodeCase) sample(t *testing.T, ctx context.Context, cfg config.Config) (demo.Sample, task.Task) {
	t.Helper()
	drivers, err := languages(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), c.lang), demo.Options{Lang: c.lang, Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	if s.Driver.Name() != "node" {
		t.Fatalf("the %s sample's driver is %s", c.lang, s.Driver.Name())
	}
	out, err := s.Driver.Run(ctx, s.Dir, []string{c.failing}, 1)
	if err != nil || len(out.Failed) != 1 || out.Failed[0].ID() != c.failing {
		t.Fatalf("at the head: %v %s", err, out.Summary())
	}
	tk := task.Task{ID: "task-" + c.lang, Fingerprint: "fp-" + c.lang, Repo: s.Dir, Commit: s.Head, Branch: "main", Failures: out.Failed,
		Bisection: task.Bisection{Good: s.Commits[2], Bad: s.Commits[3], Blame: s.Commits[3]}, Status: task.StatusRunning}
	return s, tk
}

// model is a scripted model over HTTP that repairs c in five turns (run
// the tests, find the method, edit it, run the test file, exit), then
// accepts the patch as the judge.
func (c nodeCase) model(t *testing.T) *llmtest.Server {
	blocks := "<<<<<<< SEARCH\n" + c.bug + "\n=======\n" + c.fix + "\n>>>>>>> REPLACE\n"
	editArgs, _ := json.Marshal(map[string]string{"path": c.file, "blocks": blocks})
	runFile, _ := json.Marshal(map[string][]string{"tests": {c.testFile}})
	method, _ := json.Marshal(map[string]string{"name": c.method})
	return llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c1", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c2", "search_method", string(method))}},
		llmtest.Reply{Content: "The threshold itself must count.", ToolCalls: []llm.ToolCall{call("c3", "edit", string(editArgs))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c4", "run_tests", string(runFile))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c5", "exit", `{"summary":"The threshold counts again."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Restores the at-least threshold the test asks for."}`},
	)
}

// ranNode checks that every gate ran, passed, and held the patch to the
// node driver's rules.
func (g *recordedGates) ranNode(t *testing.T, fix string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.ins) != 1 || g.ins[0].Lang == nil || g.ins[0].Lang.Name() != "node" || !strings.Contains(g.ins[0].Patch, "+"+fix) {
		t.Fatalf("the gates got %d inputs: %+v", len(g.ins), g.ins)
	}
	names := map[string]bool{}
	for _, gt := range g.gates[0] {
		names[gt.Name] = true
		if gt.Verdict != task.GatePass {
			t.Errorf("gate %s: %s %s", gt.Name, gt.Verdict, gt.Detail)
		}
	}
	for _, want := range []string{"integrity", "revert", "static", "oracle", "regression"} {
		if !names[want] {
			t.Errorf("gate %s did not run: %+v", want, g.gates[0])
		}
	}
}

// repairWithModel runs the configuration's pipeline on c's sample with
// the scripted model, through the real gates.
func repairWithModel(t *testing.T, c nodeCase) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := nodeConfig(t)
	_, tk := c.sample(t, ctx, cfg)
	srv := c.model(t)
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = srv.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	p, err := newPipeline(cfg, nil, nil, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	gates := &recordedGates{next: p.Gates}
	p.Gates = gates
	res, err := p.Repair(ctx, tk)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if res.Status != task.StatusPublished || !res.Agent.TestsPassed {
		t.Fatalf("outcome %s: %s\n%s", res.Status, res.Reason, res.Trajectory)
	}
	c.checkModel(t, srv.Requests())
	gates.ranNode(t, c.fix)
	verdicts := map[string]string{}
	for _, g := range res.Gates {
		verdicts[g.Name] = g.Detail
	}
	for name, want := range c.evidence {
		if !strings.Contains(verdicts[name], want) {
			t.Errorf("gate %s says %q, want it to mention %q", name, verdicts[name], want)
		}
	}
}

// The pipeline the configuration builds repairs the TypeScript sample
// (vitest) with a scripted model over HTTP: the node driver chosen from the
// checkout and set up, the runner run by canonical id, the method found
// with tree-sitter's index, the judge shown the test and the method, every
// gate on the node driver's rules, the static one tsc. One Node sample is
// enough here: the JavaScript sample on jest is the same driver, whose
// runners are its conformance suite's (pkg/lang/node), triaged by canonical
// id in pkg/triage (TestProcessJestReportBisectsAndQueuesCanonicalID),
// gated in pkg/validators (TestNodeGatesJest) and through worker validate
// (TestValidateJavaScriptCheats, its honest fix passing every gate); the
// offline policy on jest is pkg/harness/offline's TestRepairNode. Its
// offline repair through the whole service is
// TestDemoTypeScriptOfflineEndToEnd's; the forge's part of the way (a red
// run on GitHub in, a pull request out) is TestGitHubEndToEnd's, and
// reading vitest's JUnit from a run's artifact is pkg/forge/github/runreport's
// TestCollectVitestJUnitArtifact.
func TestPipelineRepairsTypeScript(t *testing.T) { repairWithModel(t, tsCase) }

// checkModel checks what c's scripted model was shown: its five turns
// and the judge, the tools' answers as the model saw them, and the test
// and the method before and after in the judge's prompt.
func (c nodeCase) checkModel(t *testing.T, reqs []llmtest.Request) {
	t.Helper()
	if len(reqs) != 6 {
		t.Fatalf("the model got %d requests, want 5 turns and the judge", len(reqs))
	}
	seen := func(n int) string { m := reqs[n].Messages; return m[len(m)-1].Text() }
	for n, want := range map[int][]string{
		1: {"FAIL: 0 passed, 1 failed (the task's failing tests)", c.failing, c.message},
		2: {c.file, c.method},
		4: {"passed, 0 failed"},
	} {
		for _, w := range want {
			if !strings.Contains(seen(n), w) {
				t.Errorf("request %d does not show %q:\n%s", n+1, w, seen(n))
			}
		}
	}
	var judged strings.Builder
	for _, m := range reqs[5].Messages {
		judged.WriteString(m.Text())
	}
	for _, w := range []string{strings.TrimSpace(c.bug), strings.TrimSpace(c.fix), c.testFile} {
		if !strings.Contains(judged.String(), w) {
			t.Errorf("the judge's prompt lacks %q:\n%s", w, judged.String())
		}
	}
}
