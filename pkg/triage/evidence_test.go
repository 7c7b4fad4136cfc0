package triage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
)

func TestProcessDropsFlakyFailures(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, sha := flakyRepo(t)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: []task.Failure{
		{Package: "example.com/flaky", Test: "TestFlaky", Message: "run 7: odd runs fail"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// Two of the five re-runs come before any bisection (RerunPlan).
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || !strings.HasPrefix(outs[0].Reason, "flaky: 1/2 runs failed at "+task.Short(sha)) {
		t.Fatalf("outcomes = %+v", outs)
	}
	// The CI failure and the 2 reruns.
	if !strings.HasSuffix(outs[0].Reason, "history: 2/3 recorded runs failed") {
		t.Errorf("reason = %q; want the history in it", outs[0].Reason)
	}
	if saved := store.tasks[outs[0].TaskID]; saved.Status != task.StatusDropped || saved.Flakiness.Verdict != VerdictFlaky {
		t.Errorf("saved = %+v", saved)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("a flaky failure was queued")
	}
	// The group stays with the dropped task: the next report of it is a
	// duplicate, not more runs.
	if store.groups[outs[0].Fingerprint] != outs[0].TaskID {
		t.Errorf("group not kept by the dropped task")
	}
}

func TestProcessDropsWhatDoesNotReproduceOrCannotRun(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir()}, nil)
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
	if o := outs[0]; o.Status != task.StatusDropped || !strings.HasPrefix(o.Reason, "cannot build example.com/calc/gen at "+task.Short(shas[10])+": no such package here: ") {
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

// ciReport is what `go test -json ./...` reports in a checkout of the
// fixture at its HEAD, as CI would send it.
func ciReport(t *testing.T, f *bisecttest.Repo) report.Result {
	t.Helper()
	dir := t.TempDir()
	res, err := sandbox.Run(testContext(t), sandbox.Cmd{Dir: f.Dir, Args: []string{"sh", "-c", `go test -json ./... >"$OUT"`}, Env: []string{"OUT=" + filepath.Join(dir, "r.json")}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatalf("%v: %s", err, res.Output)
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestProcessTriagesBuildFailure(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.BrokenBuildHistory(t)
	rep := ciReport(t, f)
	if len(rep.BuildErrors) != 1 || len(rep.Failures) != 0 {
		t.Fatalf("CI report: build errors %+v, failures %+v", rep.BuildErrors, rep.Failures)
	}
	store, queue := &historyStore{memStore: newMemStore(), RunCache: bisecttest.NewRunCache()}, &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
	in := Input{Repo: f.Dir, Commit: shas[8], Good: shas[0], Branch: "main", Report: rep}
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].Task == nil {
		t.Fatalf("outcomes = %+v, want one queued task", outs)
	}
	tk := *outs[0].Task
	if tk.Bisection.Blame != shas[5] || tk.Bisection.Subject != "calc: round Add" || tk.Bisection.Confidence != 1 {
		t.Errorf("bisection = %+v, want blame %s", tk.Bisection, task.Short(shas[5]))
	}
	// A binary search over 8 commits: at most 1 build at good and 3 in the
	// range, and one to reproduce.
	if tk.Bisection.Steps > 4 || outs[0].TestRuns != 1+tk.Bisection.Steps {
		t.Errorf("steps %d, test runs %d", tk.Bisection.Steps, outs[0].TestRuns)
	}
	if len(tk.Failures) != 1 {
		t.Fatalf("failures = %+v", tk.Failures)
	}
	fl := tk.Failures[0]
	if fl.Package != "example.com/calc/calc" || fl.Test != "" || !strings.Contains(fl.Message, "undefined: round") {
		t.Errorf("failure = %+v, want calc's compiler error", fl)
	}
	if len(fl.Frames) == 0 || !strings.HasPrefix(fl.Frames[0], "calc/calc.go:4") {
		t.Errorf("frames = %v, want calc/calc.go:4 relative to the workspace", fl.Frames)
	}
	if tk.Flakiness.Verdict != VerdictReliable {
		t.Errorf("flakiness = %+v", tk.Flakiness)
	}
	if len(queue.jobs) != 1 || queue.jobs[0].Task.Tests()[0] != "example.com/calc/calc" {
		t.Fatalf("jobs = %+v", queue.jobs)
	}

	// The worker's oracle: the task's "test" is the package, which fails
	// to build at the commit and passes once it builds and its tests pass.
	o, err := golang.Runner{}.Run(ctx, f.Dir, queue.jobs[0].Task.Tests(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Build) != 1 || len(o.Passed) != 0 {
		t.Errorf("oracle at the commit: %+v", o)
	}
	if err := os.WriteFile(filepath.Join(f.Dir, "calc", "calc.go"), []byte(bisecttest.AddGood), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err = (golang.Runner{}).Run(ctx, f.Dir, queue.jobs[0].Task.Tests(), 1); err != nil || !o.OK() || !slices.Contains(o.Passed, "example.com/calc/calc") {
		t.Errorf("oracle after the repair: %+v, %v", o, err)
	}

	// The builds are cached: bisecting the same package again builds
	// nothing.
	b := bisect.BuildBisector{Lang: golang.Driver{}, Cache: store}
	again, err := b.Bisect(ctx, f.Dir, shas[0], shas[8], "example.com/calc/calc")
	if err != nil {
		t.Fatal(err)
	}
	if again.Blame != shas[5] || again.Steps != 0 || again.CachedRuns == 0 {
		t.Errorf("second bisection = %+v, want the blame from the cache", again)
	}
}

// A build failure of a repository no driver knows (a Java project, where
// only Go's driver is configured) is dropped as one whose tests cannot
// run, for want of a driver: never taken for Go's, never queued.
func TestProcessDropsABuildFailureNoDriverKnows(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	sha := f.Commit("java", map[string]string{"pom.xml": "<project/>\n"})
	tr := New(newMemStore(), &memQueue{}, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{
		BuildErrors: []task.Failure{{Package: "com.acme.Widget", Message: "cannot find symbol"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || ReasonClass(outs[0].Reason) != ReasonCannotRun || !strings.Contains(outs[0].Reason, lang.ErrNoDriver.Error()) {
		t.Fatalf("outcomes = %+v", outs)
	}
}

// When the bisection names no culprit (here the failing commit is the
// root: there is nothing to bisect), the re-runs it would have stood for
// are made at bad: a pass among them makes the failure flaky; every one
// failing sends it on without a culprit, with all the runs as its
// evidence.
func TestProcessRerunsAtBadWhenNoCulpritStands(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	for _, c := range []struct {
		failFirst  int
		wantStatus task.Status
		want       task.Flakiness
	}{
		{failFirst: 3, wantStatus: task.StatusDropped, want: task.Flakiness{Runs: 7, Failures: 3, Verdict: VerdictFlaky}},
		{failFirst: 100, wantStatus: task.StatusQueued, want: task.Flakiness{Runs: 7, Failures: 7, Verdict: VerdictReliable}},
	} {
		f, sha := failsFirstRepo(t, c.failFirst)
		store, queue := newMemStore(), &memQueue{}
		tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
		outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: []task.Failure{
			{Package: "example.com/first", Test: "TestFirst", Message: "run 1 fails"},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 1 || outs[0].Status != c.wantStatus {
			t.Fatalf("failing the first %d runs: outcomes = %+v", c.failFirst, outs)
		}
		saved := store.tasks[outs[0].TaskID]
		if saved.Flakiness != c.want || saved.Bisection.Blame != "" {
			t.Errorf("failing the first %d runs: flakiness %+v, bisection %+v; want %+v and no culprit", c.failFirst, saved.Flakiness, saved.Bisection, c.want)
		}
		if c.wantStatus == task.StatusDropped && !strings.HasPrefix(outs[0].Reason, "flaky: 3/7 runs failed") {
			t.Errorf("reason = %q", outs[0].Reason)
		}
		if c.wantStatus == task.StatusQueued && len(queue.jobs) != 1 {
			t.Errorf("jobs = %+v", queue.jobs)
		}
	}
}
