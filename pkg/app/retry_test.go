package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/task"
)

// An operator retries a failure group without a forge: through the bot's
// API (POST /api/v1/tasks/{id}/retry) and with `bot replay --task`, on a
// NATS and a real redis-server the bot uses. A group held by a verdict is
// queued again at once, each time under a task and a job of its own; a
// task whose repair is under way is not retried.
func TestRetryAFailureGroupWithoutAForge(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	natsURL := tcpNATS(t)
	rs := testsvc.StartRedis(t, "retry-password")
	env := map[string]string{"REDFIX_DATA_DIR": t.TempDir(), "REDFIX_NATS_URL": natsURL, "REDFIX_NATS_TOKEN": tcpNATSToken,
		"REDFIX_REDIS_ADDR": rs.Addr(), "REDFIX_REDIS_PASSWORD": rs.Password(), "REDFIX_INGEST_TOKEN": "ingest-token-0123", "REDFIX_LOG_LEVEL": "error"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	// A failure group held for the verdict's hours by a task whose setup
	// failed (as the version before held it).
	old := task.Task{ID: "20261207T090000Z-0a1b2c", Fingerprint: "fp-npm-ci", Repo: "https://git.example/acme/shop.git", Commit: "abc123",
		Status: task.StatusDropped, Reason: "cannot run its tests: the node setup failed: npm ci: ECONNREFUSED",
		Failures: []task.Failure{{Package: "src/price.test.ts", Test: "total"}}}
	if _, _, err := sys.Store.ClaimGroup(ctx, old.Fingerprint, old.ID); err != nil {
		t.Fatal(err)
	}
	if err := sys.Store.SaveTask(ctx, old); err != nil {
		t.Fatal(err)
	}
	nextJob := func() job.Job {
		t.Helper()
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		d, err := sys.Jobs.Next(wait)
		if err != nil {
			t.Fatalf("no job queued: %v", err)
		}
		_ = d.Ack(ctx)
		return d.Job
	}

	// The API.
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, bot.URL+"/api/v1/tasks/"+old.ID+"/retry", nil)
	req.Header.Set("Authorization", "Bearer "+env["REDFIX_INGEST_TOKEN"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Task, Group, Status string }
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || answer.Task != old.ID+"-retry-1" || answer.Status != "queued" {
		t.Fatalf("POST retry: %d %+v", resp.StatusCode, answer)
	}
	if j := nextJob(); j.ID != job.RetryID(old.Fingerprint, 1) || j.Task.ID != answer.Task || len(j.Task.Failures) != 1 {
		t.Fatalf("job %s for task %s", j.ID, j.Task.ID)
	}

	// `bot replay --task`: refused while the retry's repair is under way,
	// done once it ended without a fix.
	if _, _, err := replayRun(t, ctx, "--task", answer.Task); err == nil || !strings.Contains(err.Error(), "under way") {
		t.Fatalf("replay --task of a queued task: %v", err)
	}
	ended, err := sys.Store.GetTask(ctx, answer.Task)
	if err != nil {
		t.Fatal(err)
	}
	ended.Status, ended.Reason = task.StatusFailed, "set up the node repository: npm ci: ECONNREFUSED"
	if err := sys.Store.SaveTask(ctx, ended); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := replayRun(t, ctx, "--task", answer.Task)
	if err != nil || !strings.Contains(stdout, `"task":"`+old.ID+`-retry-2"`) {
		t.Fatalf("replay --task: %v\n%s%s", err, stdout, stderr)
	}
	if j := nextJob(); j.ID != job.RetryID(old.Fingerprint, 2) {
		t.Fatalf("job %s, want the second retry's", j.ID)
	}
	if _, _, err := replayRun(t, ctx, "--task", answer.Task, "--all"); err == nil || ExitCode(err) != 2 {
		t.Fatalf("--task with --all: %v, want a usage error", err)
	}
	t.Setenv("REDFIX_REDIS_ADDR", "")
	if _, _, err := replayRun(t, ctx, "--task", answer.Task); err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "REDFIX_REDIS_ADDR") {
		t.Fatalf("--task without a Redis: %v, want a usage error naming REDFIX_REDIS_ADDR", err)
	}
}
