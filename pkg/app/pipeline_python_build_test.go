package app

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/task"
)

// A task whose failure is a test file that no longer collects (an import
// of a function a commit renamed), as triage queues it, is repaired through
// the pipeline: the agent's run of the task's tests shows the collection
// error, the edit brings the name back, every gate runs the file's tests
// with pytest.
func TestPipelineRepairsPythonCollectionError(t *testing.T) {
	pythontest.Require(t)
	clearEnv(t)
	dir, shas := pythontest.History(t, pythontest.CalcUncollected...)
	ctx := pythontest.Confined(t, dir)
	blocks := "<<<<<<< SEARCH\n        out = add(out, x)\n    return out\n=======\n        out = add(out, x)\n    return out\n\n\n# total is the name callers know.\ntotal = sum_all\n>>>>>>> REPLACE\n"
	editArgs, _ := json.Marshal(map[string]string{"path": "calc/ops.py", "blocks": blocks})
	srv := llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c1", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c2", "edit", string(editArgs))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c3", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c4", "exit", `{"summary":"total is sum_all's old name, kept for its callers."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Keeps the name the tests import."}`},
	)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = srv.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	p, err := newPipeline(cfg, nil, nil, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	head := shas[len(shas)-1]
	tk := task.Task{ID: "task-py-build", Fingerprint: "fp-py-build", Repo: dir, Commit: head, Branch: "main",
		Failures:  []task.Failure{{Package: "tests/test_calc.py", Kind: "error", Message: "ImportError while importing test module"}},
		Bisection: task.Bisection{Good: shas[1], Bad: head, Blame: shas[2]}, Status: task.StatusRunning}
	res, err := p.Repair(ctx, tk)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if res.Status != task.StatusPublished {
		t.Fatalf("outcome %s: %s\n%s", res.Status, res.Reason, res.Trajectory)
	}
	reqs := srv.Requests()
	if len(reqs) < 3 {
		t.Fatalf("the model got %d requests", len(reqs))
	}
	first := reqs[1].Messages[len(reqs[1].Messages)-1].Text()
	if !strings.Contains(first, "tests/test_calc.py") || !strings.Contains(first, "total") {
		t.Errorf("the first run of the task's tests does not show the collection error:\n%s", first)
	}
	if !strings.Contains(res.Agent.Patch, "+total = sum_all") {
		t.Errorf("patch:\n%s", res.Agent.Patch)
	}
}
