package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/retry"
	"github.com/redfix/redfix/pkg/task"
)

// fakeRetrier answers as retry.Retrier does, by task.
type fakeRetrier struct{ asked []string }

func (f *fakeRetrier) Group(_ context.Context, id, by string) (task.Task, error) {
	f.asked = append(f.asked, id+" by "+by)
	switch id {
	case "dropped":
		return task.Task{ID: "dropped-retry-1", Fingerprint: "fp", Status: task.StatusQueued}, nil
	case "running":
		return task.Task{}, fmt.Errorf("%w: task running is running: its repair is under way", retry.ErrRefused)
	case "down":
		return task.Task{}, fmt.Errorf("redis: connection refused")
	}
	return task.Task{}, fmt.Errorf("get task %s: %w", id, task.ErrNotFound)
}

// POST /api/v1/tasks/{id}/retry needs the ingest token (refused when none
// is configured: a retry spends a repair), takes no
// parameter, and says what became of the retry: 202 with the new task,
// 409 with why not, 404 for no such task, 503 when the store or the queue
// did not answer.
func TestRetryRoute(t *testing.T) {
	f := &fakeRetrier{}
	srv, _, _, _ := setup(t, Options{IngestToken: "s3cret", Retry: f})
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	if code, _ := post(t, srv.URL+"/api/v1/tasks/dropped/retry", "", nil); code != http.StatusUnauthorized || len(f.asked) != 0 {
		t.Fatalf("without the token: %d, asked %v", code, f.asked)
	}
	if code, out := post(t, srv.URL+"/api/v1/tasks/dropped/retry?force=1", "", auth); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), `"force"`) {
		t.Fatalf("with a parameter: %d %v", code, out)
	}
	code, out := post(t, srv.URL+"/api/v1/tasks/dropped/retry", "", auth)
	if code != http.StatusAccepted || out["task"] != "dropped-retry-1" || out["group"] != "fp" || out["status"] != "queued" {
		t.Fatalf("retry: %d %v", code, out)
	}
	if code, out := post(t, srv.URL+"/api/v1/tasks/running/retry", "", auth); code != http.StatusConflict || !strings.Contains(fmt.Sprint(out["error"]), "under way") {
		t.Fatalf("refused: %d %v", code, out)
	}
	if code, _ := post(t, srv.URL+"/api/v1/tasks/nope/retry", "", auth); code != http.StatusNotFound {
		t.Fatalf("unknown task: %d", code)
	}
	if code, out := post(t, srv.URL+"/api/v1/tasks/down/retry", "", auth); code != http.StatusServiceUnavailable || strings.Contains(fmt.Sprint(out["error"]), "redis") {
		t.Fatalf("store down: %d %v (the cause stays in the log)", code, out)
	}
	if f.asked[0] != "dropped by the task API" {
		t.Errorf("asked %q", f.asked[0])
	}
	// No ingest token configured: no retry through the API at all.
	open, _, _, _ := setup(t, Options{Retry: f})
	if code, out := post(t, open.URL+"/api/v1/tasks/dropped/retry", "", nil); code != http.StatusForbidden || !strings.Contains(fmt.Sprint(out["error"]), "http.ingest_token") {
		t.Fatalf("without an ingest token configured: %d %v", code, out)
	}
}
