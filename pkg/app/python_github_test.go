package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gh/ghtest"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

// A red GitHub Actions run of a Python repository, whose artifact holds
// the JUnit XML pytest wrote, reaches triage through the webhook as a Go
// run does: triage checks the repository out from the test GitHub's git
// server, chooses the Python driver, reproduces the failure with pytest,
// bisects it from the last green run to the commit that broke it, and
// queues a job whose task names the node id.
func TestPythonWorkflowRunArtifactBecomesAJob(t *testing.T) {
	clearEnv(t)
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	head := shas[len(shas)-1]
	junit := pythontest.JUnitAt(t, dir, head)
	ctx, cancel := context.WithTimeout(pythontest.Confined(t, "acme/calc"), 5*time.Minute)
	defer cancel()
	const secret = "python webhook secret"

	srv := ghtest.New(t)
	srv.CreateRepo("acme", "calc", dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/calc")
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: shas[1], Conclusion: "success", CreatedAt: t0.Add(-time.Hour)})
	red := srv.AddRun("acme", "calc", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: head, Conclusion: "failure", CreatedAt: t0,
		Jobs:      []*ghtest.Job{{Name: "pytest", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "pytest-results", Zip: ghtest.Zip(map[string][]byte{"junit.xml": junit})}},
	})

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.WebhookSecret = secret
	cfg.GitHub.APIURL = srv.APIURL()
	cfg.GitHub.AppID = app.ID
	cfg.GitHub.PrivateKeyFile = app.KeyFile
	cfg.GitHub.ResyncInterval = 0
	cfg.Triage.Reruns = 2
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	events := make(chan TriageEvent, 8)
	go func() { done <- sys.RunTriage(work, cfg, func(o TriageEvent) { events <- o }) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()

	runJSON, err := srv.RunJSON("acme", "calc", red.ID)
	if err != nil {
		t.Fatal(err)
	}
	payload := ghtest.WebhookExample(t, "workflow_run", "completed")
	payload["workflow_run"], payload["repository"] = runJSON, srv.RepoJSON("acme", "calc")
	if code, body := ghtest.Deliver(t, bot.URL+"/api/v1/github/webhook", secret, "workflow_run", "python-run-1", payload); code != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", code, body)
	}
	var o TriageEvent
	select {
	case o = <-events:
	case <-ctx.Done():
		t.Fatal("the run was not triaged")
	}
	if o.Status != task.StatusQueued || o.Task == nil {
		t.Fatalf("triage: %s: %s, want queued", o.Status, o.Reason)
	}
	tk := *o.Task
	if tk.Repo != srv.HTMLURL("acme", "calc") || tk.Commit != head || tk.Bisection.Good == "" || tk.Bisection.Blame != shas[pythontest.Broken] {
		t.Errorf("task: repo %s commit %s bisection %+v, want blame %s", tk.Repo, task.Short(tk.Commit), tk.Bisection, task.Short(shas[pythontest.Broken]))
	}
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != pythontest.Test || !strings.Contains(tk.Failures[0].Message, pythontest.FailureMessage) {
		t.Errorf("task failures %+v, want %s failing with %q", tk.Failures, pythontest.Test, pythontest.FailureMessage)
	}
	next, cancelNext := context.WithTimeout(ctx, time.Minute)
	defer cancelNext()
	d, err := sys.Jobs.Next(next)
	if err != nil {
		t.Fatalf("no job on the queue: %v", err)
	}
	if d.Job.Task.ID != tk.ID || d.Job.Task.Failures[0].ID() != pythontest.Test {
		t.Errorf("queued job names %+v, want task %s naming %s", d.Job.Task.Failures, tk.ID, pythontest.Test)
	}
}
