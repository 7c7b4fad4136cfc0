package triage

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// tallyUnloadable is nodetest's node:test project whose third commit
// renames the module its test file requires.
var tallyUnloadable = []string{
	nodetest.Tally[0],
	"tally: document it\n\n-- README.md --\ntally counts items.\n",
	"tally: the module is count now\n\n-- tally.js --\n(deleted)\n-- count.js --\nmodule.exports = { tally: (xs) => ({}) };\n",
	"tally: a note\n\n-- README.md --\ntally counts items, by name.\n",
}

// processUnloadable triages CI's report of the history's head, in which
// the test file does not load, and checks that it is a build failure of
// the file, reproduced with the driver, bisected to the commit that broke
// the import, and queued naming the file in the checkout, with the load
// error's message.
func processUnloadable(t *testing.T, history []string, broken int, file, message string) {
	dir, shas := nodetest.History(t, history...)
	ctx := nodeContext(t, dir)
	head := shas[len(shas)-1]
	rep, err := report.ParseJUnit(bytes.NewReader(nodetest.JUnitAt(t, dir, head)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.BuildErrors) != 1 || rep.BuildErrors[0].Test != "" {
		t.Fatalf("CI's report: build errors %+v, failures %+v, want the file that did not load", rep.BuildErrors, rep.Failures)
	}
	t.Logf("CI's report names %s: %q", rep.BuildErrors[0].Package, rep.BuildErrors[0].Message)
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir(), Languages: nodeDrivers(t)}, zaptest.NewLogger(t))
	outs, err := tr.Process(ctx, Input{Repo: dir, Commit: head, Branch: "main", Report: report.Result{Format: "junit", BuildErrors: rep.BuildErrors}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued || outs[0].Task == nil {
		t.Fatalf("outcomes = %+v, want one queued", outs)
	}
	tk := *outs[0].Task
	if len(tk.Failures) != 1 || tk.Failures[0].Package != file || tk.Failures[0].Test != "" {
		t.Fatalf("task failures %+v, want the file %s as a build failure", tk.Failures, file)
	}
	t.Logf("task's failure: %s: %q", tk.Failures[0].Package, tk.Failures[0].Message)
	if !strings.Contains(tk.Failures[0].Message, message) {
		t.Errorf("message %q, want the load error's %q", tk.Failures[0].Message, message)
	}
	if tk.Bisection.Blame != shas[broken] {
		t.Errorf("blame %s (%s), want %s", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(shas[broken]))
	}
	if len(queue.jobs) != 1 {
		t.Errorf("jobs %+v, want one", queue.jobs)
	}
}

// node:test's JUnit names a file that failed to run by CI's absolute path
// and says no more: the file is found in the checkout by that path's end,
// and is a build failure of it.
//
// Triage's unloadable-file path is held on node:test, its cheapest runner
// (1.9 s); the same on vitest (15.0 s) added only vitest's parts, which
// are held where they live: nodetest's TestPriceUnloadableReport (vitest's
// JUnit names the file, read as a build failure of it) and the driver's
// TestBuildUnloadable (vitest loads the file through the driver and
// reports it unloadable).
func TestProcessNodeTestUnloadableFileIsABuildFailure(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	processUnloadable(t, tallyUnloadable, 2, "test/tally.test.js", "Cannot find module '../tally'")
}
