package runreport

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/report"
)

// goTestJSON is a real go test -json report with one failing test.
const goTestJSON = `{"Action":"start","Package":"example.com/m/calc"}
{"Action":"run","Package":"example.com/m/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"    calc_test.go:9: Add(1, 2) = -1, want 3\n"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"--- FAIL: TestAdd (0.00s)\n"}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"example.com/m/calc","Elapsed":0.01}
`

const junitXML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="calc" tests="2" failures="1">
<testcase classname="example.com/m/calc" name="TestSub"><failure message="Sub(3, 1) = 4, want 2">calc_test.go:14: Sub(3, 1) = 4, want 2</failure></testcase>
<testcase classname="example.com/m/calc" name="TestMul"/>
</testsuite></testsuites>
`

type fixture struct {
	srv    *ghtest.Server
	client *gogithub.Client
	t0     time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := ghtest.New(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv.CreateRepo("acme", "calc", dir)
	srv.AddToken("ghp_runreport", "octo")
	clients, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "ghp_runreport"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := clients.ForRepo(context.Background(), "acme", "calc")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, client: cl.Client, t0: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
}

// history adds green and red runs of the workflow before the failed one.
func (f *fixture) history() {
	f.srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: "aaaa", Conclusion: "success", CreatedAt: f.t0.Add(-3 * time.Hour)})
	f.srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: "bbbb", Conclusion: "success", CreatedAt: f.t0.Add(-2 * time.Hour)})
	f.srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "other", HeadSHA: "cccc", Conclusion: "success", CreatedAt: f.t0.Add(-time.Hour)})
	f.srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "Lint", WorkflowID: 7, HeadBranch: "main", HeadSHA: "dddd", Conclusion: "success", CreatedAt: f.t0.Add(-time.Hour)})
}

// failed adds the failed run and returns it as the API gives it.
func (f *fixture) failed(t *testing.T, run ghtest.WorkflowRun) *gogithub.WorkflowRun {
	t.Helper()
	run.Name, run.HeadBranch, run.HeadSHA, run.Conclusion, run.CreatedAt = "CI", "main", "eeee", "failure", f.t0
	r := f.srv.AddRun("acme", "calc", run)
	got, _, err := f.client.Actions.GetWorkflowRunByID(context.Background(), "acme", "calc", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// failures are the collected report's failures, as its parsed form has
// them; the raw report, parsed again, must say the same.
func failures(t *testing.T, rep Report) []string {
	t.Helper()
	res, err := report.Parse(rep.Data)
	if err != nil {
		t.Fatalf("collected report does not parse: %v\n%s", err, rep.Data)
	}
	got, again := ids(rep.Parsed), ids(res)
	if strings.Join(got, "\n") != strings.Join(again, "\n") || rep.Parsed.Format != res.Format || len(rep.Parsed.BuildErrors) != len(res.BuildErrors) {
		t.Errorf("the collected parsed report (%s) has failures %v, the raw report (%s) parsed again %v", rep.Parsed.Format, got, res.Format, again)
	}
	return got
}

func ids(res report.Result) []string {
	var ids []string
	for _, fl := range res.Failures {
		ids = append(ids, fl.ID()+": "+fl.Message)
	}
	return ids
}

func TestCollectArtifacts(t *testing.T) {
	f := newFixture(t)
	f.history()
	run := f.failed(t, ghtest.WorkflowRun{
		Jobs: []*ghtest.Job{{Name: "build", Conclusion: "success"}, {Name: "test", Conclusion: "failure", Log: []byte("no go test here\n")}},
		Artifacts: []*ghtest.Artifact{
			{Name: "coverage", Zip: ghtest.Zip(map[string][]byte{"cover.out": []byte("mode: set\n")})},
			{Name: "test-results-go", Zip: ghtest.Zip(map[string][]byte{"reports/go.json": []byte(goTestJSON), "README.txt": []byte("hi")})},
			{Name: "test-results-junit", Zip: ghtest.Zip(map[string][]byte{"junit.xml": []byte(junitXML)})},
			{Name: "old", Expired: true},
		},
	})
	c := &Collector{}
	rep, err := c.Collect(context.Background(), f.client, "acme", "calc", run, []string{"test-results-*"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Good != "bbbb" {
		t.Errorf("good commit %q, want bbbb (the last green run of the same workflow on main)", rep.Good)
	}
	if len(rep.FailedJobs) != 1 || rep.FailedJobs[0] != "test" {
		t.Errorf("failed jobs %v", rep.FailedJobs)
	}
	// go test -json wins over JUnit when both are there.
	if got := failures(t, rep); len(got) != 1 || got[0] != "example.com/m/calc.TestAdd: Add(1, 2) = -1, want 3" {
		t.Errorf("failures %v", got)
	}
	if strings.Join(rep.Sources, ",") != "artifact test-results-go,artifact test-results-junit" {
		t.Errorf("sources %v", rep.Sources)
	}
	// The downloads reached the storage host without GitHub's credentials.
	reqs := f.srv.StorageRequests()
	if len(reqs) != 2 {
		t.Errorf("%d downloads, want the 2 matching artifacts", len(reqs))
	}
	for _, h := range reqs {
		if h.Get("Authorization") != "" {
			t.Errorf("a download carried credentials to the storage host: %q", h.Get("Authorization"))
		}
	}

	// JUnit alone.
	run = f.failed(t, ghtest.WorkflowRun{
		Jobs:      []*ghtest.Job{{Name: "test", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "junit", Zip: ghtest.Zip(map[string][]byte{"a/junit.xml": []byte(junitXML), "b/junit.xml": []byte(junitXML)})}},
	})
	rep, err = c.Collect(context.Background(), f.client, "acme", "calc", run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := failures(t, rep); len(got) != 2 || !strings.Contains(got[0], "TestSub: ") {
		t.Errorf("JUnit failures %v", got)
	}
}

func TestCollectLogs(t *testing.T) {
	// go test's output as a job printed it (the Go driver's fixture of
	// a module's run, pkg/lang/golang/testdata/console), beside a lint job.
	text, want := consoleFixtureWith(t, "golang", "gotest-plain", "gotest.json")
	f := newFixture(t)
	run := f.failed(t, ghtest.WorkflowRun{
		Jobs: []*ghtest.Job{{Name: "lint", Conclusion: "failure", Log: asActionsLog([]byte("golangci-lint: 3 issues\n"))}, {Name: "test", Conclusion: "failure", Log: asActionsLog(text)}},
		// Not a name the globs take.
		Artifacts: []*ghtest.Artifact{{Name: "coverage", Zip: ghtest.Zip(map[string][]byte{"go.json": []byte(goTestJSON)})}},
	})
	rep, err := (&Collector{Logs: all.Logs()}).Collect(context.Background(), f.client, "acme", "calc", run, []string{"test-results*"})
	if err != nil {
		t.Fatal(err)
	}
	if got := joblogtest.FailureIDs(rep.Parsed); !slices.Equal(got, want) || len(got) == 0 || strings.Join(rep.Sources, ",") != "log of job test" || rep.Good != "" {
		t.Errorf("from the logs: failures %v (want %v), sources %v, good %q", got, want, rep.Sources, rep.Good)
	}
	if n := len(f.srv.CallsTo("GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}")); n != 0 {
		t.Errorf("%d artifacts downloaded that the globs exclude", n)
	}

	// A run whose jobs ran no go test has no report.
	run = f.failed(t, ghtest.WorkflowRun{Jobs: []*ghtest.Job{{Name: "lint", Conclusion: "failure", Log: []byte("golangci-lint: 3 issues\n")}}})
	if _, err := (&Collector{Logs: all.Logs()}).Collect(context.Background(), f.client, "acme", "calc", run, nil); !errors.Is(err, ErrNoReport) {
		t.Errorf("a run without tests: %v, want ErrNoReport", err)
	}
}
