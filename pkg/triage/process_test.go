package triage

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

func TestProcessQueuesReliableFailureOnceAndDropsDuplicates(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	store, queue := newMemStore(), &memQueue{}
	core, logs := observer.New(zap.InfoLevel)
	tr := New(store, queue, nil, Config{Languages: goOnly, Reruns: 3, WorkDir: t.TempDir()}, zap.New(core))

	in := Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Branch: "main",
		Report: report.Result{Format: "go-test-json", Failures: []task.Failure{addFailure("1")}}}
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 {
		t.Fatalf("outcomes = %+v", outs)
	}
	o := outs[0]
	if o.Status != task.StatusQueued || o.Task == nil {
		t.Fatalf("outcome = %+v, want queued", o)
	}
	tk := *o.Task
	if tk.Bisection.Blame != shas[6] || tk.Bisection.Subject != "calc: rewrite Add" {
		t.Errorf("bisection = %+v, want blame %s", tk.Bisection, task.Short(shas[6]))
	}
	// Of the three re-runs, two come before the bisection; its culprit
	// stands for the third (RerunPlan): evidence 2³ against a test
	// failing half its runs everywhere.
	if tk.Bisection.Evidence < 8 {
		t.Errorf("bisection evidence %.1f, want 8 at least", tk.Bisection.Evidence)
	}
	if tk.Flakiness != (task.Flakiness{Runs: 2, Failures: 2, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", tk.Flakiness)
	}
	if tk.Commit != shas[10] || tk.Repo != f.Dir || tk.Branch != "main" || tk.Fingerprint != o.Fingerprint || tk.ID != o.TaskID || tk.CreatedAt.IsZero() {
		t.Errorf("task = %+v", tk)
	}
	if o.TestRuns != 2+tk.Bisection.Steps {
		t.Errorf("TestRuns = %d, want 2 reruns + %d bisect steps", o.TestRuns, tk.Bisection.Steps)
	}
	if saved := store.tasks[o.TaskID]; saved.Status != task.StatusQueued {
		t.Errorf("saved task = %+v", saved)
	}
	if len(queue.jobs) != 1 || queue.jobs[0].ID != o.Fingerprint || queue.jobs[0].Task.ID != o.TaskID {
		t.Errorf("jobs = %+v", queue.jobs)
	}
	// The CI failure and the two reruns are in the test's history.
	if h := store.runs[bisecttest.AddTestID]; h != [2]int{3, 3} {
		t.Errorf("history = %v, want 3 runs, 3 failures", h)
	}
	for _, e := range logs.FilterMessage("queued").All() {
		fields := e.ContextMap()
		if fields["repo"] != f.Dir || fields["task_id"] != o.TaskID || fields["fingerprint"] != o.Fingerprint {
			t.Errorf("log fields = %v", fields)
		}
	}
	if logs.FilterMessage("queued").Len() != 1 {
		t.Errorf("no queued log entry")
	}

	// The next CI run fails the same way (another duration): a duplicate,
	// decided without running anything.
	in.Report.Failures = []task.Failure{addFailure("7")}
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != "duplicate of task "+o.TaskID || outs[0].TestRuns != 0 {
		t.Fatalf("second report: %+v", outs)
	}
	if saved := store.tasks[outs[0].TaskID]; saved.Status != task.StatusDropped || saved.Reason != outs[0].Reason {
		t.Errorf("the duplicate is not recorded with its reason: %+v", saved)
	}
	if len(queue.jobs) != 1 {
		t.Errorf("a duplicate was queued: %d jobs", len(queue.jobs))
	}
}

func TestProcessLeavesOptedOutRepositories(t *testing.T) {
	t.Parallel()
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, OptOut: []string{"https://github.com/acme/secret.git"}}, nil)
	outs, err := tr.Process(context.Background(), Input{Repo: "https://github.com/acme/secret", Commit: "abc",
		Report: report.Result{Failures: []task.Failure{{Package: "p", Test: "TestX"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != "repository opted out" || outs[0].TestRuns != 0 {
		t.Fatalf("outcomes = %+v", outs)
	}
	if len(store.groups) != 0 || len(store.tasks) != 1 {
		t.Errorf("groups %v tasks %v: want no claim and the dropped task recorded", store.groups, store.tasks)
	}
}

// A report that triage cannot finish gives its group back, so that its
// redelivery is triaged again rather than dropped as a duplicate.
func TestProcessReleasesGroupsItCannotFinish(t *testing.T) {
	t.Parallel()
	f, shas := bisecttest.CalcHistory(t)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[10], Report: report.Result{Failures: []task.Failure{addFailure("1")}}})
	if err == nil {
		t.Fatal("Process with a cancelled context succeeded")
	}
	if len(store.groups) != 0 || len(store.released) != 1 || len(store.tasks) != 0 || len(queue.jobs) != 0 {
		t.Errorf("groups %v released %v tasks %v jobs %v", store.groups, store.released, store.tasks, queue.jobs)
	}
}

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
	tr := New(store, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir()}, zap.NewNop())
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
