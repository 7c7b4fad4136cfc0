package triage

import (
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// A run that uploaded no report is triaged from its log: pytest's default
// output of the repository's tests, read by the Python driver's console
// reader (as the forges read a failed job's log), is the report; triage
// reproduces, bisects and queues the same task the JUnit report of the
// same run gives (the failing test by its node id; a module that failed
// to collect as the build failure of its file).
func TestProcessPythonConsoleLog(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	for _, c := range []struct {
		name    string
		history []string
		want    string
		blame   int
	}{
		{"a failing test", pythontest.Calc, pythontest.Test, pythontest.Broken},
		{"a module that does not collect", pythontest.CalcUncollected, "tests/test_calc.py", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, shas := pythontest.History(t, c.history...)
			ctx := pythonContext(t, dir)
			head := shas[len(shas)-1]
			console, _ := pythontest.RunAt(t, dir, head)
			data := python.Driver{}.ReadConsole(joblog.Lines(console))
			if data == nil {
				t.Fatalf("no pytest run read in:\n%s", console)
			}
			rep, err := report.Parse(data)
			if err != nil {
				t.Fatal(err)
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
			if len(tk.Failures) != 1 || tk.Failures[0].ID() != c.want {
				t.Fatalf("task failures %+v, want %s", tk.Failures, c.want)
			}
			if tk.Bisection.Blame != shas[c.blame] {
				t.Errorf("blame %s (%s), want %s", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(shas[c.blame]))
			}
		})
	}
}
