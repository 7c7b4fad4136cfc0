package triage

import (
	"context"
	"testing"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// A run that uploaded no report is triaged from its log: pytest's default
// output of the repository's tests, read by the Python driver's console
// reader (as the forges read a failed job's log), is the report.
// consoleIsTheSameFailure checks it on the run whose JUnit report tr has
// just queued as task first (the same pytest run printed the log and wrote
// the report): the log's report names the same failures, and is the same
// failure to triage, a duplicate of that task, which reproduced, bisected
// and queued it (the failing test by its node id; a module that failed to
// collect as the build failure of its file).
func consoleIsTheSameFailure(t *testing.T, ctx context.Context, tr *Triage, in Input, console []byte, first Outcome) {
	t.Helper()
	data := python.Driver{}.ReadConsole(joblog.Lines(console))
	if data == nil {
		t.Fatalf("no pytest run read in:\n%s", console)
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	in.Report = rep
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != "duplicate of task "+first.TaskID {
		t.Fatalf("the log's report: outcomes %+v, want a duplicate of task %s (%s)", outs, first.TaskID, first.Task.Failures[0].ID())
	}
}
