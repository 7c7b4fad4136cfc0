package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/worker"
)

// pyShop is a Python repository whose second commit (which also checks
// the tiers it is given) broke its volume discount: an order of exactly a tier's minimum no longer gets it.
var pyShop = map[string]string{
	"pyproject.toml":    "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
	"shop/__init__.py":  "",
	"tests/__init__.py": "",
	"shop/pricing.py": `"""Quote orders from a catalog of unit prices."""

from dataclasses import dataclass


@dataclass
class Tier:
    min_qty: int
    percent_off: int


class Catalog:
    def __init__(self):
        self.prices = {}
        self.tiers = []

    def set_price(self, sku, cents):
        self.prices[sku] = cents

    def add_tier(self, tier):
        self.tiers.append(tier)
        self.tiers.sort(key=lambda t: t.min_qty, reverse=True)

    def discount(self, qty):
        for t in self.tiers:
            if qty >= t.min_qty:
                return t.percent_off
        return 0

    def quote(self, sku, qty):
        total = self.prices[sku] * qty
        return total - total * self.discount(qty) // 100
`,
	"tests/test_discount.py": `import pytest

from shop.pricing import Catalog, Tier


@pytest.fixture
def catalog():
    c = Catalog()
    c.set_price("widget", 1000)
    c.add_tier(Tier(min_qty=10, percent_off=5))
    return c


@pytest.mark.parametrize("qty, want", [(9, 9000), (10, 9500), (20, 19000)], ids=["below", "at_threshold", "above"])
def test_volume_discount(catalog, qty, want):
    assert catalog.quote("widget", qty) == want
`,
}

// pyShopRepo writes the repository and returns it with its good and bad
// commits; it skips without Debian's python3 and pytest (fails under CI).
func pyShopRepo(t *testing.T, ctx context.Context) (dir, good, bad string) {
	t.Helper()
	pythontest.Require(t)
	dir = t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(files map[string]string) {
		for rel, text := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(pyShop)
	if good, err = repo.CommitAll(ctx, "pricing: volume discounts"); err != nil {
		t.Fatal(err)
	}
	// The breaking commit does more than the bug: a fix that undoes only
	// the bug is not a revert of it.
	broken := strings.Replace(pyShop["shop/pricing.py"], "qty >= t.min_qty", "qty > t.min_qty", 1)
	broken = strings.Replace(broken, "    def add_tier(self, tier):\n", "    def add_tier(self, tier):\n        if not 0 < tier.percent_off <= 100:\n            raise ValueError(f\"a tier takes 1 to 100 percent off, not {tier.percent_off}\")\n", 1)
	write(map[string]string{"shop/pricing.py": broken})
	if bad, err = repo.CommitAll(ctx, "pricing: stop at the first tier that applies"); err != nil {
		t.Fatal(err)
	}
	return dir, good, bad
}

// recordedGates are the pipeline's own gates, with what they were given
// and what they said kept.
type recordedGates struct {
	next  worker.Gates
	mu    sync.Mutex
	ins   []validators.Input
	gates [][]task.Gate
}

func (g *recordedGates) Check(ctx context.Context, in validators.Input) ([]task.Gate, error) {
	gates, err := g.next.Check(ctx, in)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ins = append(g.ins, in)
	g.gates = append(g.gates, gates)
	return gates, err
}

// pyShopModel is a scripted model over HTTP that repairs the shop's
// discount in five turns (run the tests, find the method, edit it, run the
// test file, exit), then accepts the patch as the judge.
func pyShopModel(t *testing.T) *llmtest.Server {
	blocks := "<<<<<<< SEARCH\n            if qty > t.min_qty:\n=======\n            if qty >= t.min_qty:\n>>>>>>> REPLACE\n"
	editArgs, _ := json.Marshal(map[string]string{"path": "shop/pricing.py", "blocks": blocks})
	return llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c1", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c2", "search_method", `{"name":"discount"}`)}},
		llmtest.Reply{Content: "The tier's minimum must count.", ToolCalls: []llm.ToolCall{call("c3", "edit", string(editArgs))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c4", "run_tests", `{"tests":["tests/test_discount.py"]}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c5", "exit", `{"summary":"An order of exactly a tier's minimum gets the tier again."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Restores the at-least threshold the test asks for."}`},
	)
}

// checkPyShopModel checks what pyShopModel was shown: its five turns and
// the judge, pytest's answers by node id as the model saw them, the
// method found through the Python index, and the test function and the
// method before and after in the judge's prompt.
func checkPyShopModel(t *testing.T, reqs []llmtest.Request) {
	t.Helper()
	const failing = "tests/test_discount.py::test_volume_discount[at_threshold]"
	if len(reqs) != 6 {
		t.Fatalf("the model got %d requests, want 5 turns and the judge", len(reqs))
	}
	// What the tools answered, as the model saw it.
	seen := func(n int) string { m := reqs[n].Messages; return m[len(m)-1].Text() }
	for n, want := range map[int][]string{
		1: {"FAIL: 0 passed, 1 failed (the task's failing tests)", "--- FAIL: " + failing, "assert 10000 == 9500"},
		2: {"shop/pricing.py", "def discount(self, qty)"},
		4: {"PASS: ", " passed, 0 failed (these include the task's failing tests)"},
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
	for _, w := range []string{"def test_volume_discount(catalog, qty, want):", "def catalog():", "shop/pricing.py: method Catalog.discount", "if qty > t.min_qty:", "if qty >= t.min_qty:"} {
		if !strings.Contains(judged.String(), w) {
			t.Errorf("the judge's prompt lacks %q:\n%s", w, judged.String())
		}
	}
}

// The pipeline the configuration builds repairs the demo's Python sample
// with a scripted model over HTTP, through the Python driver's tools
// (pytest by node id, the Python index; what the model was shown is
// checked turn by turn), the judge shown the test and the method, every
// gate holding the patch to Python's rules. The sample's whole way
// through the service (triage reproducing and bisecting with pytest) is
// TestDemoPythonOfflineEndToEnd's; the forge's part of the way is
// TestGitHubEndToEnd's, and reading pytest's JUnit from a run's artifact
// is pkg/gh/runreport's.
func TestPipelineRepairsPython(t *testing.T) {
	pythontest.Require(t)
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	model := pyShopModel(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = model.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	drivers, err := languages(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), "shop"), demo.Options{Lang: "python", Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Driver.Run(ctx, s.Dir, []string{pyAtThreshold}, 1)
	if err != nil || len(out.Failed) != 1 || out.Failed[0].ID() != pyAtThreshold {
		t.Fatalf("at the head: %v %s", err, out.Summary())
	}
	tk := task.Task{ID: "task-python", Fingerprint: "fp-python", Repo: s.Dir, Commit: s.Head, Branch: "main", Failures: out.Failed,
		Bisection: task.Bisection{Good: s.Commits[2], Bad: s.Commits[3], Blame: s.Commits[3]}, Status: task.StatusRunning}
	p, err := newPipeline(cfg, nil, nil, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Repair(ctx, tk)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if res.Status != task.StatusPublished || !res.Agent.TestsPassed {
		t.Fatalf("outcome %s: %s\n%s", res.Status, res.Reason, res.Trajectory)
	}
	checkPyShopModel(t, model.Requests())
	// Every gate ran and passed, the oracle and regression with pytest and
	// the static gate with Python's checks.
	verdicts := map[string]string{}
	for _, g := range res.Gates {
		verdicts[g.Name] = g.Detail
		if g.Verdict != task.GatePass {
			t.Errorf("gate %s: %s %s", g.Name, g.Verdict, g.Detail)
		}
	}
	for name, want := range map[string]string{"integrity": "no test", "oracle": "pytest", "regression": "pytest", "static": "pyflakes", "judge": "at-least threshold"} {
		if !strings.Contains(verdicts[name], want) {
			t.Errorf("gate %s says %q, want it to mention %q", name, verdicts[name], want)
		}
	}
}

// worker tool works through the clone's driver: pytest by node id, the
// Python index for symbols.
func TestToolOnPython(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir, _, _ := pyShopRepo(t, ctx)
	run := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := Tool(ctx, args, &stdout, &stderr)
		return stdout.String() + stderr.String(), err
	}
	out, err := run("--repo", dir, "--test", "tests/test_discount.py::test_volume_discount[at_threshold]", "run_tests")
	if err != nil || !strings.Contains(out, "FAIL: 0 passed, 1 failed (the task's failing tests)") || !strings.Contains(out, "assert 10000 == 9500") {
		t.Errorf("run_tests: %v\n%s", err, out)
	}
	out, err = run("--repo", dir, "search_method_in_class", "class=Catalog", "name=discount")
	if err != nil || !strings.Contains(out, "shop/pricing.py") || !strings.Contains(out, "if qty > t.min_qty:") {
		t.Errorf("search_method_in_class: %v\n%s", err, out)
	}
}

// A clone no driver knows still has the tools that read it.
func TestToolWithoutADriver(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# notes\nnothing to run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := Tool(ctx, []string{"--repo", dir, "read_file", "path=NOTES.md"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "nothing to run") {
		t.Errorf("read_file: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	// What needs a language is refused, saying why: no test is run as
	// any language's.
	stdout.Reset()
	err = Tool(ctx, []string{"--repo", dir, "run_tests", "tests=test_notes"}, &stdout, &stderr)
	if !errors.Is(err, lang.ErrNoDriver) || !strings.Contains(err.Error(), "no language driver") {
		t.Errorf("run_tests without a driver: %v\n%s", err, stdout.String())
	}
}
