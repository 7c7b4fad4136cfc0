package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
)

// TestGitHubEndToEndPython: a red run of a Python repository on GitHub,
// pytest's JUnit in its artifact, becomes one pull request through the same
// service as a Go one: triage reproduces and bisects with pytest, a
// scripted model over HTTP repairs through the Python driver's tools
// (pytest by node id, the Python index; what it was shown is checked turn
// by turn by checkPyShopModel) and judges the patch, every gate holds the
// patch to Python's rules, and the branch pushed to the test GitHub holds
// the fix and the trajectory.
func TestGitHubEndToEndPython(t *testing.T) {
	pythontest.Require(t)
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	model := pyShopModel(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = model.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	drivers, err := languages(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sample, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), "shop"), demo.Options{Lang: "python", Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	svc := startGitHubService(t, ctx, cfg, redRun{
		Owner: "acme", Name: "pyshop", Dir: sample.Dir, Good: sample.Good, Head: sample.Head,
		Job: "pytest", Artifact: "test-results", Files: map[string][]byte{"junit.xml": sample.Report},
	})
	tk, evidence := published(t, svc.deliverRed(t, ctx, "5e0c1a70-aa01-11ee-8c90-0242ac120002"))
	const failing = "tests/test_discount.py::test_volume_discount[at_threshold]"
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != failing {
		t.Errorf("the task's failures: %+v, want %s", tk.Failures, failing)
	}
	if tk.Commit != sample.Head || tk.Bisection.Blame != sample.Commits[3] {
		t.Errorf("task: commit %s blame %s, want %s %s", tk.Commit, tk.Bisection.Blame, sample.Head, sample.Commits[3])
	}
	// Every gate ran and passed, the oracle and regression with pytest and
	// the static gate with Python's checks.
	for name, want := range map[string]string{"integrity": "no test", "oracle": "pytest", "regression": "pytest", "static": "pyflakes", "judge": "at-least threshold"} {
		if !strings.Contains(evidence[name], want) {
			t.Errorf("gate %s says %q, want it to mention %q", name, evidence[name], want)
		}
	}
	checkPyShopModel(t, model.Requests())
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests on the test GitHub, want 1", len(pulls))
	}
	pr := pulls[0]
	if out, err := svc.srv.Git("acme", "pyshop", "show", pr.Head+":shop/pricing.py"); err != nil || !strings.Contains(out, "qty >= t.min_qty") {
		t.Errorf("the pushed branch %s does not hold the fix: %v", pr.Head, err)
	}
	if !strings.Contains(pr.Body, failing) || !strings.Contains(strings.ToLower(pr.Body), "trajectory") {
		t.Errorf("the pull request does not name the test or carry the trajectory:\n%s", pr.Body)
	}
}
