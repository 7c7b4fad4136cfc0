package triage

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// drivers are the Go and Python drivers, as the service has them.
func drivers(py python.Driver) *lang.Drivers {
	return lang.New(golang.Driver{}, py)
}

// pythonContext is a test's context whose commands run confined, for the
// repository dir.
func pythonContext(t *testing.T, dir string) context.Context {
	t.Helper()
	pythontest.Require(t)
	ctx, cancel := context.WithTimeout(pythontest.Confined(t, dir), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A pytest JUnit report of a Python repository is triaged as a Go one is:
// the Python driver is chosen from the checkout, the failure reproduced
// with pytest, bisected to the commit that broke it, and queued as a task
// naming the test by its node id, with the failing assertion's message
// and frames relative to the repository.
func TestProcessPythonReportBisectsAndQueuesNodeID(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	ctx := pythonContext(t, dir)
	head := shas[len(shas)-1]
	console, junit := pythontest.RunAt(t, dir, head)
	rep, err := report.ParseJUnit(bytes.NewReader(junit))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Test != pythontest.TestName {
		t.Fatalf("CI's report: failures %+v, want %s alone", rep.Failures, pythontest.TestName)
	}
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir(), Languages: drivers(python.Driver{Python: pythontest.Python})}, zaptest.NewLogger(t))
	outs, err := tr.Process(ctx, Input{Repo: dir, Commit: head, Branch: "main", Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].Task == nil {
		t.Fatalf("outcomes = %+v, want one queued", outs)
	}
	tk := *outs[0].Task
	if tk.Bisection.Blame != shas[pythontest.Broken] {
		t.Errorf("blame %s (%s), want %s", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(shas[pythontest.Broken]))
	}
	if tk.Flakiness != (task.Flakiness{Runs: 2, Failures: 2, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", tk.Flakiness)
	}
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != pythontest.Test {
		t.Fatalf("task failures %+v, want %s", tk.Failures, pythontest.Test)
	}
	f := tk.Failures[0]
	t.Logf("task's failure: %s: %q, frames %q", f.ID(), f.Message, f.Frames)
	if !strings.Contains(f.Message, pythontest.FailureMessage) {
		t.Errorf("message %q, want the assertion's %q", f.Message, pythontest.FailureMessage)
	}
	if len(f.Frames) == 0 {
		t.Error("no frames")
	}
	for _, fr := range f.Frames {
		if strings.HasPrefix(fr, "/") || strings.Contains(fr, "ci/checkout") {
			t.Errorf("frame %q is not relative to the repository", fr)
		}
	}
	if len(queue.jobs) != 1 || queue.jobs[0].Task.Failures[0].ID() != pythontest.Test {
		t.Errorf("jobs %+v, want one naming %s", queue.jobs, pythontest.Test)
	}
	consoleIsTheSameFailure(t, ctx, tr, Input{Repo: dir, Commit: head, Branch: "main", Report: rep}, console, outs[0])
	// A report naming a test that passes at the same commit does not
	// reproduce: pytest ran it, by its node id, and it passed.
	rep.Failures[0].Test = "test_add"
	outs, err = tr.Process(ctx, Input{Repo: dir, Commit: head, Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || ReasonClass(outs[0].Reason) != ReasonNotReproduced {
		t.Errorf("a passing test's report: %+v, want not reproduced", outs)
	}
}

// A repository whose files no driver knows is dropped with that reason,
// and triage ends without an error: the report is never retried.
func TestProcessDropsRepositoryNoDriverKnows(t *testing.T) {
	t.Parallel()
	f := bisecttest.NewRepo(t)
	sha := f.Commit("a Makefile project", map[string]string{"Makefile": "test:\n\t./check.sh\n", "check.sh": "exit 1\n"})
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{WorkDir: t.TempDir(), Languages: drivers(python.Driver{})}, zaptest.NewLogger(t))
	in := Input{Repo: f.Dir, Commit: sha, Report: report.Result{Format: "junit", Failures: []task.Failure{
		{Package: "check", Test: "test_one", Message: "exit 1"},
		{Package: "check", Test: "test_two", Message: "exit status 2"},
	}}}
	outs, err := tr.Process(testContext(t), in)
	if err != nil {
		t.Fatalf("Process: %v, want the groups dropped, no error (an error is retried)", err)
	}
	if len(outs) == 0 {
		t.Fatal("no outcomes")
	}
	for _, o := range outs {
		if o.Status != task.StatusDropped || !strings.Contains(o.Reason, lang.ErrNoDriver.Error()) || ReasonClass(o.Reason) != ReasonCannotRun {
			t.Errorf("outcome %+v, want dropped: no driver (class %s)", o, ReasonCannotRun)
		}
		if saved := store.tasks[o.TaskID]; saved.Status != task.StatusDropped || saved.Reason != o.Reason {
			t.Errorf("saved task %+v, want dropped with the reason", saved)
		}
		if o.TestRuns != 0 {
			t.Errorf("%d test runs for a repository nothing can run", o.TestRuns)
		}
	}
	if len(queue.jobs) != 0 {
		t.Errorf("jobs %+v", queue.jobs)
	}
	// Decided: the groups stay with the dropped tasks, so that the same
	// report again is a duplicate rather than another attempt.
	if len(store.released) != 0 {
		t.Errorf("groups released %v: the report would be triaged again", store.released)
	}
}

// A Python repository whose dependencies cannot be installed (its
// requirement is on no index the driver can reach) fails with the setup
// command that failed and its output, and no test run: no verdict on the
// failure, so its group is not held. The next report of the failure, once
// the requirement installs, is triaged at once and queued, not dropped as
// "same failure as task …" for the verdict's hours.
func TestProcessPythonSetupFailureFailsAndTheNextReportRetries(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	// An index that refuses connections: a port that was free a moment ago.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	index := "http://" + l.Addr().String() + "/simple/"
	l.Close()
	f := bisecttest.NewRepo(t)
	sha := f.Commit("needs a package", map[string]string{
		"pyproject.toml":    "[project]\nname = \"needy\"\nversion = \"0.1\"\n",
		"requirements.txt":  "redfix-absent-package==1.0\n",
		"tests/test_x.py":   "def test_x():\n    assert False\n",
		"tests/__init__.py": "\n",
	})
	ctx := pythonContext(t, f.Dir)
	store, queue := newMemStore(), &memQueue{}
	in := Input{Repo: f.Dir, Commit: sha, Report: report.Result{Format: "junit", Failures: []task.Failure{
		{Package: "tests.test_x", Test: "test_x", Message: "assert False"},
	}}}
	tr := New(store, queue, nil, Config{WorkDir: t.TempDir(), Languages: drivers(python.Driver{Python: pythontest.Python, IndexURL: index})}, zaptest.NewLogger(t))
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatalf("Process: %v, want the group failed, no error", err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusFailed {
		t.Fatalf("outcomes %+v, want one failed", outs)
	}
	reason := outs[0].Reason
	t.Logf("reason: %s", reason)
	for _, want := range []string{"setup failed", "pip install", "redfix-absent-package"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not say %q", reason, want)
		}
	}
	if saved := store.tasks[outs[0].TaskID]; saved.Status != task.StatusFailed || saved.Reason != reason {
		t.Errorf("saved task %+v, want failed with the reason", saved)
	}
	if outs[0].TestRuns != 0 || len(queue.jobs) != 0 {
		t.Errorf("outcome %+v, jobs %d: want no test run, no job", outs[0], len(queue.jobs))
	}

	// The requirement installs now (an index serves it): the same failure
	// reported again is triaged and queued.
	wheel, data := pythontest.Wheel(t, "redfix-absent-package", "1.0", map[string]string{"redfix_absent_package/__init__.py": "\n"})
	served := pythontest.NewIndex(t, map[string][]byte{wheel: data})
	tr = New(store, queue, nil, Config{WorkDir: t.TempDir(), Reruns: 2, Languages: drivers(python.Driver{Python: pythontest.Python, IndexURL: served.URL + "/simple/"})}, zaptest.NewLogger(t))
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("the next report: outcomes %+v, want the failure triaged again and queued", outs)
	}
	if len(queue.jobs) != 1 {
		t.Errorf("%d jobs, want 1", len(queue.jobs))
	}
}

// Without Languages no driver runs a report's tests, Go's no more than
// another's: the report is dropped as one whose tests cannot be run, no
// driver, and nothing ran.
func TestProcessWithoutLanguagesRunsNothing(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{WorkDir: t.TempDir()}, zaptest.NewLogger(t))
	outs, err := tr.Process(testContext(t), Input{Repo: dir, Commit: shas[len(shas)-1], Report: report.Result{Format: "junit", Failures: []task.Failure{
		{Package: pythontest.TestClassname, Test: pythontest.TestName, Message: pythontest.FailureMessage},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || ReasonClass(outs[0].Reason) != ReasonCannotRun || !strings.Contains(outs[0].Reason, lang.ErrNoDriver.Error()) || len(queue.jobs) != 0 {
		t.Errorf("outcomes %+v, jobs %d: want cannot run, for want of a driver", outs, len(queue.jobs))
	}
}

// A test module that no longer imports (CI's pytest names it in its JUnit
// by its module, with no classname, as a collection error) is a build
// failure of the test file: reproduced with the driver, bisected to the
// commit that broke the import, and queued naming the file.
func TestProcessPythonCollectionErrorIsABuildFailureOfTheFile(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.CalcUncollected...)
	ctx := pythonContext(t, dir)
	head := shas[len(shas)-1]
	console, junit := pythontest.RunAt(t, dir, head)
	rep, err := report.ParseJUnit(bytes.NewReader(junit))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Kind != "error" || rep.Failures[0].Test != pythontest.TestClassname {
		t.Fatalf("CI's report: failures %+v, want the collection error of %s", rep.Failures, pythontest.TestClassname)
	}
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir(), Languages: drivers(python.Driver{Python: pythontest.Python})}, zaptest.NewLogger(t))
	outs, err := tr.Process(ctx, Input{Repo: dir, Commit: head, Branch: "main", Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].Task == nil {
		t.Fatalf("outcomes = %+v, want one queued", outs)
	}
	tk := *outs[0].Task
	if len(tk.Failures) != 1 || tk.Failures[0].Package != "tests/test_calc.py" || tk.Failures[0].Test != "" {
		t.Fatalf("task failures %+v, want the file tests/test_calc.py as a build failure", tk.Failures)
	}
	if tk.Bisection.Blame != shas[2] {
		t.Errorf("blame %s (%s), want %s", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(shas[2]))
	}
	consoleIsTheSameFailure(t, ctx, tr, Input{Repo: dir, Commit: head, Branch: "main", Report: rep}, console, outs[0])
}
