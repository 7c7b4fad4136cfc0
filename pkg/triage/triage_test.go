package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// addFailure is TestAdd's failure as CI reported it, with a path and a
// duration of CI's machine in it.
func addFailure(ciRun string) task.Failure {
	out := "=== RUN   TestAdd\n    calc_test.go:7: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.0" + ciRun + "s)\n"
	return task.Failure{Package: "example.com/calc/calc", Test: "TestAdd", Message: "Add(1, 2) = -1, want 3", Output: out, Frames: report.Frames(out, 5)}
}

func TestProcessQueuesReliableFailureOnceAndDropsDuplicates(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	store, queue := newMemStore(), &memQueue{}
	core, logs := observer.New(zap.InfoLevel)
	tr := New(store, queue, nil, Config{Reruns: 3, WorkDir: t.TempDir()}, zap.New(core))

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
	if tk.Flakiness != (task.Flakiness{Runs: 3, Failures: 3, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", tk.Flakiness)
	}
	if tk.Commit != shas[10] || tk.Repo != f.Dir || tk.Branch != "main" || tk.Fingerprint != o.Fingerprint || tk.ID != o.TaskID || tk.CreatedAt.IsZero() {
		t.Errorf("task = %+v", tk)
	}
	if o.TestRuns != 3+tk.Bisection.Steps {
		t.Errorf("TestRuns = %d, want 3 reruns + %d bisect steps", o.TestRuns, tk.Bisection.Steps)
	}
	if saved := store.tasks[o.TaskID]; saved.Status != task.StatusQueued {
		t.Errorf("saved task = %+v", saved)
	}
	if len(queue.jobs) != 1 || queue.jobs[0].ID != o.Fingerprint || queue.jobs[0].Task.ID != o.TaskID {
		t.Errorf("jobs = %+v", queue.jobs)
	}
	// The CI failure and the three reruns are in the test's history.
	if h := store.runs[bisecttest.AddTestID]; h != [2]int{4, 4} {
		t.Errorf("history = %v, want 4 runs, 4 failures", h)
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

func TestProcessDropsFlakyFailures(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, sha := flakyRepo(t)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{WorkDir: t.TempDir()}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: []task.Failure{
		{Package: "example.com/flaky", Test: "TestFlaky", Message: "run 7: odd runs fail"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || !strings.HasPrefix(outs[0].Reason, "flaky: 3/5 runs failed at "+task.Short(sha)) {
		t.Fatalf("outcomes = %+v", outs)
	}
	// The CI failure and the 5 reruns.
	if !strings.HasSuffix(outs[0].Reason, "history: 4/6 recorded runs failed") {
		t.Errorf("reason = %q; want the history in it", outs[0].Reason)
	}
	if saved := store.tasks[outs[0].TaskID]; saved.Status != task.StatusDropped || saved.Flakiness.Verdict != VerdictFlaky {
		t.Errorf("saved = %+v", saved)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("a flaky failure was queued")
	}
	// The group stays with the dropped task: the next report of it is a
	// duplicate, not another five runs.
	if store.groups[outs[0].Fingerprint] != outs[0].TaskID {
		t.Errorf("group not kept by the dropped task")
	}
}

func TestProcessDropsWhatDoesNotReproduceOrCannotRun(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir()}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[10], Report: report.Result{
		Failures: []task.Failure{
			{Package: "example.com/calc/calc", Test: "TestOK", Message: "connection reset"},
			{Package: "com.example.FooTest", Test: "testBar", Message: "expected 1"},
		},
		BuildErrors: []task.Failure{{Package: "example.com/calc/gen", Message: "undefined: x"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("outcomes = %+v", outs)
	}
	if o := outs[0]; o.Status != task.StatusDropped || o.Reason != "cannot build example.com/calc/gen at "+task.Short(shas[10])+": no such package in the module" {
		t.Errorf("build error: %+v", o)
	}
	if o := outs[1]; o.Status != task.StatusDropped || !strings.HasPrefix(o.Reason, "does not reproduce at "+task.Short(shas[10])+": 0/2 runs failed") || o.TestRuns != 2 {
		t.Errorf("passing test: %+v", o)
	}
	if o := outs[2]; o.Status != task.StatusDropped || !strings.Contains(o.Reason, "cannot run com.example.FooTest.testBar") {
		t.Errorf("foreign test: %+v", o)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("jobs queued: %+v", queue.jobs)
	}
}

func TestProcessLeavesOptedOutRepositories(t *testing.T) {
	t.Parallel()
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{OptOut: []string{"https://github.com/acme/secret.git"}}, nil)
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
	tr := New(store, queue, nil, Config{WorkDir: t.TempDir()}, nil)
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

func TestInvestigateReliableFailure(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	v, err := Investigate(ctx, f.Dir, "", "HEAD", []string{"TestAdd"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Flakiness != (task.Flakiness{Runs: 2, Failures: 2, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", v.Flakiness)
	}
	if v.Bisection == nil || v.Bisection.Blame != shas[6] || v.BisectError != "" {
		t.Fatalf("bisection = %+v, error %q", v.Bisection, v.BisectError)
	}
	if v.Failure == nil || v.Failure.Message != "Add(1, 2) = -1, want 3" || v.Fingerprint != Fingerprint(f.Dir, *v.Failure) {
		t.Errorf("failure %+v fingerprint %q", v.Failure, v.Fingerprint)
	}
	if len(v.Tests) != 1 || v.Tests[0] != bisecttest.AddTestID || v.Commit != shas[10] {
		t.Errorf("tests %q commit %s", v.Tests, v.Commit)
	}
	if v.TestRuns != 2+v.Bisection.Steps {
		t.Errorf("TestRuns = %d", v.TestRuns)
	}
	if s := v.String(); !strings.Contains(s, "blame:       "+shas[6]+" calc: rewrite Add") {
		t.Errorf("String() =\n%s", s)
	}
	// The repository's own checkout was left alone.
	if head, _ := f.Repo.Resolve(ctx, "HEAD"); head != shas[10] {
		t.Errorf("HEAD moved to %s", head)
	}
}

func TestInvestigateFlakyTestIsNotBisected(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, _ := flakyRepo(t)
	v, err := Investigate(ctx, f.Dir, "", "", []string{"TestFlaky"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if v.Flakiness != (task.Flakiness{Runs: 4, Failures: 2, Verdict: VerdictFlaky}) || v.Bisection != nil || v.TestRuns != 4 {
		t.Errorf("verdict = %+v", v)
	}
}

// stolenStore hands the group to another task right after this triage
// claims it: its claim lapsed and another report's triage took it.
type stolenStore struct{ *memStore }

func (s stolenStore) ClaimGroup(ctx context.Context, fp, id string) (string, bool, error) {
	owner, created, err := s.memStore.ClaimGroup(ctx, fp, id)
	s.mu.Lock()
	s.groups[fp] = "task-other"
	s.mu.Unlock()
	return owner, created, err
}

func TestProcessStopsWhenAnotherTaskTakesTheGroup(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	mem, queue := newMemStore(), &memQueue{}
	tr := New(stolenStore{mem}, queue, nil, Config{Reruns: 3, WorkDir: t.TempDir(), ClaimRefresh: 10 * time.Millisecond}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || !strings.Contains(outs[0].Reason, "took the group while this triage ran") {
		t.Fatalf("outcomes %+v, want a drop: another task took the group", outs)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("queued %d jobs for a group another task holds", len(queue.jobs))
	}
	if owner := mem.groups[outs[0].Fingerprint]; owner != "task-other" {
		t.Errorf("claim %q, want it left with task-other", owner)
	}
}
