package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/gh/ghtest"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

// TestGitHubEndToEndPython: a red run of a Python repository on GitHub,
// pytest's JUnit in its artifact, becomes one pull request through the same
// service as a Go one: triage reproduces and bisects with pytest, the
// offline policy repairs through the Python driver, every gate holds the
// patch to Python's rules, and the branch pushed to the test GitHub holds
// the fix and the trajectory.
func TestGitHubEndToEndPython(t *testing.T) {
	pythontest.Require(t)
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const secret = "e2e webhook secret"

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
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "pyshop", sample.Dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/pyshop")
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	srv.AddRun("acme", "pyshop", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: sample.Good, Conclusion: "success", CreatedAt: t0.Add(-time.Hour)})
	red := srv.AddRun("acme", "pyshop", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: sample.Head, Conclusion: "failure", CreatedAt: t0,
		Jobs:      []*ghtest.Job{{Name: "pytest", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "test-results", Zip: ghtest.Zip(map[string][]byte{"junit.xml": sample.Report})}},
	})

	cfg.HTTP.WebhookSecret = secret
	cfg.GitHub.APIURL = srv.APIURL()
	cfg.GitHub.AppID = app.ID
	cfg.GitHub.PrivateKeyFile = app.KeyFile
	cfg.GitHub.ResyncInterval = 0
	cfg.Triage.Reruns = 2
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	pipe, err := NewPipelineWith(cfg, sys.Store, sys.GitHub, log)
	if err != nil {
		t.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() {
		if err := sys.RunTriage(work, cfg, nil); err != nil {
			t.Errorf("triage loop: %v", err)
		}
		done <- struct{}{}
	}()
	go func() {
		if err := sys.RunWorker(work, cfg, pipe); err != nil {
			t.Errorf("worker: %v", err)
		}
		done <- struct{}{}
	}()
	defer func() { stop(); <-done; <-done }()

	runJSON, err := srv.RunJSON("acme", "pyshop", red.ID)
	if err != nil {
		t.Fatal(err)
	}
	payload := ghtest.WebhookExample(t, "workflow_run", "completed")
	payload["workflow_run"], payload["repository"] = runJSON, srv.RepoJSON("acme", "pyshop")
	const delivery = "5e0c1a70-aa01-11ee-8c90-0242ac120002"
	settled := sys.Expect(delivery)
	if code, body := ghtest.Deliver(t, bot.URL+"/api/v1/github/webhook", secret, "workflow_run", delivery, payload); code != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", code, body)
	}
	tasks, err := settled.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("want one published task, got %d", len(tasks))
	}
	tk := tasks[0]
	const failing = "tests/test_discount.py::test_volume_discount[at_threshold]"
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != failing {
		t.Errorf("the task's failures: %+v, want %s", tk.Failures, failing)
	}
	if tk.Commit != sample.Head || tk.Bisection.Blame != sample.Commits[3] {
		t.Errorf("task: commit %s blame %s, want %s %s", tk.Commit, tk.Bisection.Blame, sample.Head, sample.Commits[3])
	}
	// Every gate ran and passed, the oracle and regression with pytest and
	// the static gate with Python's checks.
	if len(tk.Rounds) == 0 {
		t.Fatal("the task records no round")
	}
	evidence := map[string]string{}
	for _, g := range tk.Rounds[len(tk.Rounds)-1].Gates {
		evidence[g.Name] = g.Detail
		if g.Verdict != task.GatePass {
			t.Errorf("gate %s: %s %s", g.Name, g.Verdict, g.Detail)
		}
	}
	for name, want := range map[string]string{"integrity": "no test", "oracle": "pytest", "regression": "pytest", "static": "pyflakes", "judge": "at-least threshold"} {
		if !strings.Contains(evidence[name], want) {
			t.Errorf("gate %s says %q, want it to mention %q", name, evidence[name], want)
		}
	}
	if n := len(model.Requests()); n != 6 {
		t.Errorf("the model got %d requests, want 5 turns and the judge", n)
	}
	srv.Lock()
	repo, _ := srv.Repo("acme", "pyshop")
	pulls := append([]*ghtest.Pull(nil), repo.Pulls...)
	srv.Unlock()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests on the test GitHub, want 1", len(pulls))
	}
	pr := pulls[0]
	if out, err := srv.Git("acme", "pyshop", "show", pr.Head+":shop/pricing.py"); err != nil || !strings.Contains(out, "qty >= t.min_qty") {
		t.Errorf("the pushed branch %s does not hold the fix: %v", pr.Head, err)
	}
	if !strings.Contains(pr.Body, failing) || !strings.Contains(strings.ToLower(pr.Body), "trajectory") {
		t.Errorf("the pull request does not name the test or carry the trajectory:\n%s", pr.Body)
	}
}
