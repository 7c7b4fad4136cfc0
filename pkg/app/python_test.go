package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// A pytest JUnit report posted to the ingest API, as CI posts a Go one, is
// triaged with the Python driver chosen from the repository's files: the
// failure is reproduced with pytest in the sandbox, bisected to the commit
// that broke it, and a job is queued whose task names the test by its node
// id, with the failing assertion's message.
func TestPythonReportThroughTheAPIBecomesAJob(t *testing.T) {
	clearEnv(t)
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	head := shas[len(shas)-1]
	junit := pythontest.JUnitAt(t, dir, head)
	// The tests run confined, as the service's do.
	ctx, cancel := context.WithTimeout(pythontest.Confined(t, dir), 5*time.Minute)
	defer cancel()

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.AllowRepos = []string{dir}
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
	// What triage decided; the task then waits for a worker, which this
	// test does not run.
	events := make(chan TriageEvent, 8)
	go func() { done <- sys.RunTriage(work, cfg, func(o TriageEvent) { events <- o }) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()

	const delivery = "pytest-ci-run-1"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, bot.URL+"/api/v1/reports?"+url.Values{"repo": {dir}, "commit": {head}, "branch": {"main"}}.Encode(), bytes.NewReader(junit))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Redfix-Delivery", delivery)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer struct {
		Format   string `json:"format"`
		Failures int    `json:"failures"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &answer) != nil || answer.Failures != 1 || !strings.Contains(answer.Format, "junit") {
		t.Fatalf("POST the report: %d %s, want 202, a JUnit report with one failure", resp.StatusCode, body)
	}
	o := testsvc.Receive(t, 5*time.Minute, "the report is triaged", events)
	if o.Status != task.StatusQueued {
		t.Fatalf("triage: %s: %s, want queued", o.Status, o.Reason)
	}
	tk, err := sys.Store.GetTask(ctx, o.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.StatusQueued {
		t.Errorf("stored task %s: %s", tk.ID, tk.Status)
	}
	if tk.Bisection.Blame != shas[pythontest.Broken] {
		t.Errorf("blame %s, want %s", task.Short(tk.Bisection.Blame), task.Short(shas[pythontest.Broken]))
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
	if d.Job.Task.ID != tk.ID || len(d.Job.Task.Failures) != 1 || d.Job.Task.Failures[0].ID() != pythontest.Test {
		t.Errorf("queued job %s names %+v, want task %s naming %s", d.Job.ID, d.Job.Task.Failures, tk.ID, pythontest.Test)
	}
}

// A report of a repository that no language driver knows is triaged once:
// each failure is dropped with that reason, and the report is settled,
// not retried.
func TestReportOfARepositoryNoDriverKnowsIsDropped(t *testing.T) {
	clearEnv(t)
	dir, shas := pythontest.History(t, "a Makefile project\n\n-- Makefile --\ntest:\n\t./check.sh\n-- check.sh --\nexit 1\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sys, cfg := startSystem(t, map[string]string{"REDFIX_ALLOW_REPOS": dir})
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sys.RunTriage(work, cfg, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()
	const junit = `<testsuite name="check"><testcase classname="check" name="test_one"><failure message="exit 1">check.sh failed</failure></testcase></testsuite>`
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	settled := sys.Expect("make-run-1")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, bot.URL+"/api/v1/reports?"+url.Values{"repo": {dir}, "commit": {shas[0]}}.Encode(), strings.NewReader(junit))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Redfix-Delivery", "make-run-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST the report: %d", resp.StatusCode)
	}
	tasks, err := settled.Wait(ctx)
	if err != nil {
		t.Fatalf("the report was not settled as triaged: %v", err)
	}
	if len(tasks) != 1 || tasks[0].Status != task.StatusDropped || !strings.Contains(tasks[0].Reason, "no language driver") || triage.ReasonClass(tasks[0].Reason) != triage.ReasonCannotRun {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatal("want one task dropped: no language driver")
	}
}
