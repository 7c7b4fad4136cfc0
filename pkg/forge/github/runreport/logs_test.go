package runreport

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// consoleFixture is a runner's console output from a driver's testdata
// (pkg/lang/<driver>/testdata/console, whose README says how the runner
// wrote it), and the failures the JUnit report of the same run gives.
func consoleFixture(t *testing.T, driver, name string) (log []byte, want []string) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "lang", driver, "testdata", "console")
	log, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile(filepath.Join(dir, name+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.Parse(xml)
	if err != nil {
		t.Fatal(err)
	}
	return log, failureIDs(res)
}

// failureIDs are a result's failures and build failures, with their kind.
func failureIDs(r report.Result) []string {
	var ids []string
	for _, f := range append(append([]task.Failure(nil), r.Failures...), r.BuildErrors...) {
		ids = append(ids, f.ID()+" kind="+f.Kind)
	}
	slices.Sort(ids)
	return ids
}

// A workflow run with no artifacts whose failed job printed a runner's
// output to its log (as GitHub Actions stores it: timestamps, groups, the
// step's error) gives that report: the failures, ids and build failures
// the runner's JUnit report of the same run gives, Data a report that
// parses to the same, its source the job's log. A lint job's log beside it
// gives nothing.
func TestCollectConsoleLogs(t *testing.T) {
	for _, c := range []struct{ driver, name string }{{"python", "pytest-default"}, {"python", "pytest-verbose"}, {"node", "vitest"}, {"node", "jest"}} {
		t.Run(c.name, func(t *testing.T) {
			log, want := consoleFixture(t, c.driver, c.name)
			f := newFixture(t)
			run := f.failed(t, ghtest.WorkflowRun{Jobs: []*ghtest.Job{
				{Name: "lint", Conclusion: "failure", Log: asActionsLog([]byte("ruff: 3 issues\n"))},
				{Name: "test", Conclusion: "failure", Log: asActionsLog(log)},
			}})
			rep, err := (&Collector{Logs: all.Logs()}).Collect(context.Background(), f.client, "acme", "calc", run, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := failureIDs(rep.Parsed); !slices.Equal(got, want) {
				t.Errorf("from the job's log:\n%s\nfrom the JUnit report of the same run:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Equal(rep.Sources, []string{"log of job test"}) || !slices.Equal(rep.FailedJobs, []string{"lint", "test"}) {
				t.Errorf("sources %v, failed jobs %v", rep.Sources, rep.FailedJobs)
			}
			again, err := report.Parse(rep.Data)
			if err != nil || !slices.Equal(failureIDs(again), want) {
				t.Errorf("the report kept for audit reads as %v, %v", failureIDs(again), err)
			}
		})
	}
	// Without a reader the logs are not read.
	log, _ := consoleFixture(t, "python", "pytest-default")
	f := newFixture(t)
	run := f.failed(t, ghtest.WorkflowRun{Jobs: []*ghtest.Job{{Name: "test", Conclusion: "failure", Log: asActionsLog(log)}}})
	if _, err := (&Collector{}).Collect(context.Background(), f.client, "acme", "calc", run, nil); err != ErrNoReport {
		t.Errorf("a collector without a log reader: %v, want ErrNoReport", err)
	}
}
