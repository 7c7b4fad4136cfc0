package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// TestGitHubEndToEndTypeScript: a red run of a TypeScript repository on
// GitHub, vitest's own JUnit report in its artifact, becomes one pull
// request through the same service as a Go or Python one: triage
// reproduces and bisects with vitest through the node driver, a scripted
// model over HTTP repairs it and judges the patch, every gate holds it to
// the node driver's rules (tsc for the static gate), and the branch pushed
// to the test GitHub holds the fix.
func TestGitHubEndToEndTypeScript(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := tsCase
	cfg := nodeConfig(t)
	s, _ := c.sample(t, ctx, cfg)
	model := c.model(t)
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = model.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	svc := startGitHubService(t, ctx, cfg, redRun{
		Owner: "acme", Name: "tshop", Dir: s.Dir, Good: s.Good, Head: s.Head,
		Job: "vitest", Artifact: "test-results",
		Files: map[string][]byte{"junit.xml": nodetest.JUnitAt(t, s.Dir, s.Head)},
	})

	tk, evidence := published(t, svc.deliverRed(t, ctx, "7a1c2e90-aa01-11ee-8c90-0242ac120002"))
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != c.failing {
		t.Errorf("the task's failures: %+v, want %s", tk.Failures, c.failing)
	}
	if tk.Commit != s.Head || tk.Bisection.Blame != s.Commits[3] {
		t.Errorf("task: commit %s blame %s, want %s %s", tk.Commit, tk.Bisection.Blame, s.Head, s.Commits[3])
	}
	for name, want := range map[string]string{"integrity": "no test", "oracle": "node", "regression": "node", "static": "tsc", "judge": "at-least threshold"} {
		if !strings.Contains(evidence[name], want) {
			t.Errorf("gate %s says %q, want it to mention %q", name, evidence[name], want)
		}
	}
	c.checkModel(t, model.Requests())
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests on the test GitHub, want 1", len(pulls))
	}
	pr := pulls[0]
	if out, err := svc.srv.Git("acme", "tshop", "show", pr.Head+":"+c.file); err != nil || !strings.Contains(out, c.fix) {
		t.Errorf("the pushed branch %s does not hold the fix: %v", pr.Head, err)
	}
	if !strings.Contains(pr.Body, c.failing) || !strings.Contains(strings.ToLower(pr.Body), "trajectory") {
		t.Errorf("the pull request does not name the test or carry the trajectory:\n%s", pr.Body)
	}
}
