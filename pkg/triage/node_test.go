package triage

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// nodeDrivers are the service's drivers, the Node one with the tests'
// shared cache of node_modules.
func nodeDrivers(t *testing.T) *lang.Drivers {
	return lang.New(golang.Driver{}, python.Driver{}, node.Driver{CacheDir: nodetest.CacheDir(t)})
}

// nodeContext is a test's context whose commands run confined, for the
// repository dir.
func nodeContext(t *testing.T, dir string) context.Context {
	t.Helper()
	nodetest.Require(t)
	ctx, cancel := context.WithTimeout(nodetest.Confined(t, dir), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// nodeCase is a nodetest history whose breaking commit fails one test, and
// how CI's JUnit report names it.
type nodeCase struct {
	history        []string
	broken         int
	test, reportID string
	message, frame string
	passing        string
}

// processNode triages CI's JUnit report of the history's head (written by
// the real runner in a checkout of its own) and checks that the failure
// is reproduced through the Node driver, found reliable, bisected to the
// breaking commit, and queued naming the test canonically, with the
// assertion's message and frames relative to the repository; and that a
// report naming a test that passes there does not reproduce.
func processNode(t *testing.T, c nodeCase) {
	dir, shas := nodetest.History(t, c.history...)
	ctx := nodeContext(t, dir)
	head := shas[len(shas)-1]
	rep, err := report.ParseJUnit(bytes.NewReader(nodetest.JUnitAt(t, dir, head)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].ID() != c.reportID {
		t.Fatalf("CI's report: failures %+v, want %s alone", rep.Failures, c.reportID)
	}
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir(), Languages: nodeDrivers(t)}, zaptest.NewLogger(t))
	outs, err := tr.Process(ctx, Input{Repo: dir, Commit: head, Branch: "main", Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].Task == nil {
		t.Fatalf("outcomes = %+v, want one queued", outs)
	}
	tk := *outs[0].Task
	if tk.Bisection.Blame != shas[c.broken] {
		t.Errorf("blame %s (%s), want %s", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(shas[c.broken]))
	}
	if tk.Flakiness != (task.Flakiness{Runs: 2, Failures: 2, Verdict: VerdictReliable}) {
		t.Errorf("flakiness = %+v", tk.Flakiness)
	}
	if len(tk.Failures) != 1 || tk.Failures[0].ID() != c.test {
		t.Fatalf("task failures %+v, want %s", tk.Failures, c.test)
	}
	f := tk.Failures[0]
	t.Logf("task's failure: %s: %q, frames %q", f.ID(), f.Message, f.Frames)
	if f.Message != c.message {
		t.Errorf("message %q, want the assertion's %q", f.Message, c.message)
	}
	if !slices.Contains(f.Frames, c.frame) {
		t.Errorf("frames %q, want %s among them", f.Frames, c.frame)
	}
	for _, fr := range append(f.Frames, f.Output) {
		if strings.Contains(fr, "/ci/checkout/") {
			t.Errorf("%q keeps CI's checkout path", fr)
		}
	}
	if len(queue.jobs) != 1 || queue.jobs[0].Task.Failures[0].ID() != c.test {
		t.Errorf("jobs %+v, want one naming %s", queue.jobs, c.test)
	}
	// A report naming a test that passes at the same commit does not
	// reproduce: the runner ran it, by its canonical id, and it passed.
	_, name, _ := strings.Cut(c.passing, "::")
	rep.Failures[0].Package, rep.Failures[0].Test = strings.TrimSuffix(c.passing, "::"+name), name
	outs, err = tr.Process(ctx, Input{Repo: dir, Commit: head, Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || ReasonClass(outs[0].Reason) != ReasonNotReproduced {
		t.Errorf("a passing test's report: %+v, want not reproduced", outs)
	}
}

// A red JavaScript repository tested with jest, whose CI reports through
// jest-junit's default dialect (no file, the names joined by spaces): the
// driver resolves the name to the test's canonical id, jest runs it, and
// CI's absolute frames become relative to the repository.
//
// Triage's Node path is held here, on jest, the cheaper of the two runners
// it ran on: a vitest repository triaged the same way (26.8 s of the
// package's run, against jest's 15.9 s) checked nothing of triage's that
// this does not, and vitest's own parts are held where they live:
// nodetest's TestHistoriesBreakTheNamedTest (at the breaking commit,
// vitest's JUnit names the test canonically, with the assertion's message)
// and the driver's TestRunVitest (the test run by vitest, reruns counted,
// its frames relative to the checkout, the passing sibling run alone by
// its JUnit spelling).
func TestProcessJestReportBisectsAndQueuesCanonicalID(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	processNode(t, nodeCase{
		history: nodetest.Cart, broken: nodetest.CartBroken,
		test: nodetest.CartTest, reportID: nodetest.CartJUnitSuite + "." + nodetest.CartJUnitName,
		message: nodetest.CartFailure, frame: nodetest.CartFrame, passing: nodetest.CartPassing,
	})
}
