package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/task"
)

// redRun is a repository on the test GitHub with a green workflow run at
// Good and a red one at Head whose artifact holds the runner's report.
type redRun struct {
	Owner, Name string
	// Dir is the repository's history, pushed to the test GitHub.
	Dir        string
	Good, Head string
	// Job is the red run's failing job; Artifact and Files its artifact.
	Job, Artifact string
	Files         map[string][]byte
}

// ghService is the service (triage loop, worker, webhook) started against
// a test GitHub holding one red run, with its own data directory.
type ghService struct {
	srv    *ghtest.Server
	sys    *System
	hook   string
	secret string
	owner  string
	name   string
	red    *ghtest.WorkflowRun
}

// startGitHubService puts r on a new test GitHub, points cfg at it (the
// GitHub App, a webhook secret, two triage reruns) and starts the service
// with the configuration's pipeline: the triage loop and a worker, until
// the test ends.
func startGitHubService(t *testing.T, ctx context.Context, cfg config.Config, r redRun) *ghService {
	t.Helper()
	const secret = "e2e webhook secret"
	srv := ghtest.New(t)
	srv.CreateRepo(r.Owner, r.Name, r.Dir)
	app := srv.NewApp("redfix")
	srv.Install(r.Owner, r.Owner+"/"+r.Name)
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	srv.AddRun(r.Owner, r.Name, ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: r.Good, Conclusion: "success", CreatedAt: t0.Add(-time.Hour)})
	red := srv.AddRun(r.Owner, r.Name, ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: r.Head, Conclusion: "failure", CreatedAt: t0,
		Jobs:      []*ghtest.Job{{Name: r.Job, Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: r.Artifact, Zip: ghtest.Zip(r.Files)}},
	})

	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.HTTP.WebhookSecret, cfg.HTTP.ReadToken = secret, testReadToken
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
	bot := httptest.NewServer(sys.Handler(cfg))
	pipe, err := NewPipelineWith(cfg, sys.Store, sys.Forges, log)
	if err != nil {
		bot.Close()
		sys.Close()
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
	t.Cleanup(func() {
		stop()
		<-done
		<-done
		bot.Close()
		sys.Close()
	})
	return &ghService{srv: srv, sys: sys, hook: bot.URL + "/api/v1/github/webhook", secret: secret, owner: r.Owner, name: r.Name, red: red}
}

// deliverRed delivers the red run's signed workflow_run webhook (GitHub's
// published example carrying the test GitHub's run) and waits for the
// tasks it settles into.
func (s *ghService) deliverRed(t *testing.T, ctx context.Context, delivery string) []task.Task {
	t.Helper()
	return s.deliverRun(t, ctx, s.red, delivery)
}

// deliverRun delivers run's signed workflow_run webhook and waits for the
// tasks it settles into.
func (s *ghService) deliverRun(t *testing.T, ctx context.Context, run *ghtest.WorkflowRun, delivery string) []task.Task {
	t.Helper()
	runJSON, err := s.srv.RunJSON(s.owner, s.name, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	payload := ghtest.WebhookExample(t, "workflow_run", "completed")
	payload["workflow_run"], payload["repository"] = runJSON, s.srv.RepoJSON(s.owner, s.name)
	settled := s.sys.Expect(delivery)
	defer settled.Release()
	if code, body := ghtest.Deliver(t, s.hook, s.secret, "workflow_run", delivery, payload); code != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", code, body)
	}
	tasks, err := settled.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// pulls are the pull requests on the test GitHub's repository.
func (s *ghService) pulls() []*ghtest.Pull {
	s.srv.Lock()
	defer s.srv.Unlock()
	repo, _ := s.srv.Repo(s.owner, s.name)
	return append([]*ghtest.Pull(nil), repo.Pulls...)
}

// published checks that tasks are one published task whose last round's
// gates all passed, and returns it with each gate's evidence.
func published(t *testing.T, tasks []task.Task) (task.Task, map[string]string) {
	t.Helper()
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("want one published task, got %d", len(tasks))
	}
	tk := tasks[0]
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
	return tk, evidence
}

// shopSample builds the demo's Go sample repository for a GitHub test: the
// shop whose head CI reports red, with its breaking commit below.
func shopSample(t *testing.T, ctx context.Context) demo.Sample {
	t.Helper()
	sample, err := demo.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	return sample
}

// shopRun is the shop sample's red run on the test GitHub (acme/shop): its
// head, the last green commit, and the go test -json report in the run's
// artifact.
func shopRun(s demo.Sample) redRun {
	return redRun{
		Owner: "acme", Name: "shop", Dir: s.Dir, Good: s.Good, Head: s.Head,
		Job: "test", Artifact: "test-results", Files: map[string][]byte{"go-test.json": s.Report},
	}
}
