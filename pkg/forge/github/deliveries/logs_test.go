package deliveries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/forge/github/runreport"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/report"
)

// A workflow_run webhook for a run that uploaded no report, whose failed
// job printed pytest's output (stored as Actions stores logs), becomes the
// report triage takes: the failures pytest's JUnit report of the same run
// names (pkg/lang/python/testdata/console), the module that failed to
// collect among them, the run's commits.
func TestRunWithoutReportTriagedFromItsLog(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "lang", "python", "testdata", "console")
	out, err := os.ReadFile(filepath.Join(dir, "pytest-default.log"))
	if err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile(filepath.Join(dir, "pytest-default.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := report.Parse(xml)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	log.WriteString("\ufeff2026-11-20T10:00:00.0000000Z ##[group]Run python -m pytest\n")
	for i, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		fmt.Fprintf(&log, "%s %s\n", t0.Add(time.Duration(i+1)*time.Millisecond).Format("2006-01-02T15:04:05.0000000Z"), l)
	}
	log.WriteString("2026-11-20T10:00:09.0000000Z ##[error]Process completed with exit code 1.\n")

	ex := ghtest.WebhookPayloads(t)
	f := newGHFixture(t)
	f.proc.Collector = &runreport.Collector{Logs: all.Logs()}
	run := f.srv.AddRun("acme", "calc", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: "4444444444444444444444444444444444444444", Conclusion: "failure", CreatedAt: f.failed.CreatedAt.Add(time.Minute),
		Jobs: []*ghtest.Job{{Name: "pytest", Conclusion: "failure", Log: []byte(log.String())}},
	})
	res, err := f.proc.Process(context.Background(), ingest.Submission{ID: "d-log", Kind: event.Kind, Event: event.WorkflowRun, Payload: f.runPayload(t, ex, run.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report == nil {
		t.Fatalf("no report: %s", res.Note)
	}
	if res.Report.Commit != run.HeadSHA || res.Report.Good != "1111111111111111111111111111111111111111" {
		t.Errorf("report of commit %s, good %s", res.Report.Commit, res.Report.Good)
	}
	got, err := report.Parse(res.Report.Data)
	if err != nil {
		t.Fatalf("the log's report does not parse: %v", err)
	}
	ids := func(r report.Result) []string {
		var s []string
		for _, f := range slices.Concat(r.Failures, r.BuildErrors) {
			s = append(s, f.ID()+" "+f.Kind)
		}
		slices.Sort(s)
		return s
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) || len(w) != 4 {
		t.Errorf("failures from the log %v, want the JUnit report's %v", g, w)
	}
}
