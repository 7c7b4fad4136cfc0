package runreport

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/report"
)

// consoleFixture is a runner's console output from a driver's testdata
// (pkg/lang/<driver>/testdata/console, whose README says how the runner
// wrote it), and the failures the JUnit report of the same run gives.
func consoleFixture(t *testing.T, driver, name string) (log []byte, want []string) {
	t.Helper()
	return consoleFixtureWith(t, driver, name, name+".xml")
}

// consoleFixtureWith is consoleFixture with the same run's report in the
// file counterpart (go test -json's, say).
func consoleFixtureWith(t *testing.T, driver, name, counterpart string) (log []byte, want []string) {
	t.Helper()
	log, res := joblogtest.Fixture(t, filepath.Join("..", "..", "..", "lang", driver, "testdata", "console"), name, counterpart)
	return log, joblogtest.FailureIDs(res)
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
			if got := joblogtest.FailureIDs(rep.Parsed); !slices.Equal(got, want) {
				t.Errorf("from the job's log:\n%s\nfrom the JUnit report of the same run:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Equal(rep.Sources, []string{"log of job test"}) || !slices.Equal(rep.FailedJobs, []string{"lint", "test"}) {
				t.Errorf("sources %v, failed jobs %v", rep.Sources, rep.FailedJobs)
			}
			again, err := report.Parse(rep.Data)
			if err != nil || !slices.Equal(joblogtest.FailureIDs(again), want) {
				t.Errorf("the report kept for audit reads as %v, %v", joblogtest.FailureIDs(again), err)
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

// asActionsLog prefixes every line as GitHub Actions stores a job's log.
func asActionsLog(out []byte) []byte {
	var b strings.Builder
	b.WriteString("\ufeff2026-11-20T10:00:00.0000000Z ##[group]Run the tests\n")
	t0 := time.Date(2026, 11, 20, 10, 0, 1, 0, time.UTC)
	for i, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		fmt.Fprintf(&b, "%s %s\r\n", t0.Add(time.Duration(i)*time.Millisecond).Format("2006-01-02T15:04:05.0000000Z"), l)
	}
	b.WriteString("2026-11-20T10:00:09.0000000Z ##[error]Process completed with exit code 1.\n")
	return []byte(b.String())
}
