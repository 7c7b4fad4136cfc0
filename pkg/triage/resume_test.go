package triage

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// crashingStore fails the first save of a queued task, as a bot killed
// between queueing the job and recording the task would.
type crashingStore struct {
	*memStore
	failed atomic.Bool
}

func (s *crashingStore) SaveTask(ctx context.Context, t task.Task) error {
	if t.Status == task.StatusQueued && s.failed.CompareAndSwap(false, true) {
		return errors.New("redis: connection refused")
	}
	return s.memStore.SaveTask(ctx, t)
}

// A report whose triage stopped after the job was queued and before the
// task was recorded is redelivered: its triage resumes under the same task
// ID, queueing again is a no-op, and the task is recorded. Nothing is left
// recorded as queued without a job, and nothing is queued twice.
func TestRedeliveredReportResumesAfterACrashBetweenQueueAndRecord(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	store, queue := &crashingStore{memStore: newMemStore()}, &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir()}, zap.NewNop())
	in := Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Branch: "main",
		Report:     report.Result{Format: "go-test-json", Failures: []task.Failure{addFailure("1")}},
		Submission: "sub-1", Received: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}

	if _, err := tr.Process(ctx, in); err == nil {
		t.Fatal("the first delivery did not fail")
	}
	if len(queue.jobs) != 1 {
		t.Fatalf("jobs after the first delivery: %d, want 1 (queued before recording)", len(queue.jobs))
	}
	firstID := queue.jobs[0].Task.ID
	if _, ok := store.tasks[firstID]; ok {
		t.Fatal("the task was recorded although its save failed")
	}
	// The claim is still the first delivery's: the job exists.
	if store.groups[queue.jobs[0].ID] != firstID {
		t.Fatalf("claim %q, want the queued task %s", store.groups[queue.jobs[0].ID], firstID)
	}

	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].TaskID != firstID {
		t.Fatalf("redelivery: %+v, want queued as task %s", outs, firstID)
	}
	if len(queue.jobs) != 1 {
		t.Fatalf("%d jobs after the redelivery, want 1", len(queue.jobs))
	}
	if saved := store.tasks[firstID]; saved.Status != task.StatusQueued {
		t.Fatalf("recorded task %+v", saved)
	}

	// Another report of the same failure is a duplicate of that task.
	other := in
	other.Submission = "sub-2"
	outs, err = tr.Process(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != task.StatusDropped || outs[0].Reason != "duplicate of task "+firstID {
		t.Fatalf("second report: %+v", outs[0])
	}
}
