package gitlab_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/lang/all"
)

const goTestJSON = `{"Action":"run","Package":"example.com/ledger","Test":"TestBalance"}
{"Action":"output","Package":"example.com/ledger","Test":"TestBalance","Output":"    ledger_test.go:9: Balance() = 99, want 100\n"}
{"Action":"fail","Package":"example.com/ledger","Test":"TestBalance","Elapsed":0}
{"Action":"fail","Package":"example.com/ledger","Elapsed":0.1}
`

// pytestJUnit is a report as pytest writes it: the message in an attribute,
// the traceback as the failure's text.
const pytestJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2">
<testcase classname="tests.test_discount" name="test_volume_discount[at_threshold]" time="0.002"><failure message="AssertionError: assert 10000 == 9500">def test_volume_discount():
&gt;       assert price(10) == 9500
E       AssertionError: assert 10000 == 9500

tests/test_discount.py:12: AssertionError</failure></testcase>
<testcase classname="tests.test_discount" name="test_no_discount" time="0.001"/>
</testsuite></testsuites>`

const goTestText = `$ go test ./...
--- FAIL: TestBalance (0.00s)
    ledger_test.go:9: Balance() = 99, want 100
FAIL
FAIL	example.com/ledger	0.004s
ok  	example.com/other	0.002s
`

// TestPipelineReport: a failed pipeline's report comes, job by failed
// job, from the JUnit or go test -json files of its archive, else from its
// suite of the pipeline's test report (GitLab's reading of
// artifacts:reports:junit, written back as JUnit), else from the go test
// output in its log; the good commit is the last successful pipeline's on
// the ref; a pipeline whose failed jobs left none of these has no report.
func TestPipelineReport(t *testing.T) {
	ctx := context.Background()
	srv := gltest.New(t)
	bot := srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	srv.AddGroupMember("acme", bot, gltest.Developer)
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "one"}, {"commit", "-q", "--allow-empty", "-m", "two"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	const path = "acme/payments/ledger"
	srv.CreateProject(path, dir)
	out, _ := srv.Git(path, "rev-list", "main")
	shas := strings.Fields(out)
	green := srv.AddPipeline(path, "main", shas[1], "push", bot, &gltest.Job{Name: "unit", Status: "success"})
	d, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken, Logs: all.Logs()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		jobs    []*gltest.Job
		source  string
		failing string
	}{
		{"archive", []*gltest.Job{{Name: "unit", Status: "failed", Files: map[string][]byte{"go-test.json": []byte(goTestJSON), "coverage.txt": []byte("mode: set\n")}}},
			"archive of job unit (go-test.json)", "example.com/ledger.TestBalance"},
		{"test report", []*gltest.Job{{Name: "pytest", Status: "failed", JUnit: []byte(pytestJUnit)}, {Name: "lint", Status: "success"}},
			"test report of job pytest", "test_volume_discount[at_threshold]"},
		{"log", []*gltest.Job{{Name: "go", Status: "failed", Trace: "\x1b[0Ksection_start:1764580000:step_script\r\x1b[0K" + goTestText}},
			"log of job go", "example.com/ledger.TestBalance"},
	} {
		pl := srv.AddPipeline(path, "main", shas[0], "push", bot, c.jobs...)
		rep, err := d.PipelineReport(ctx, path, pl.ID, "main")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(rep.Sources, []string{c.source}) || rep.Good != green.SHA || len(rep.Parsed.Failures) != 1 || !strings.HasSuffix(rep.Parsed.Failures[0].ID(), c.failing) {
			t.Errorf("%s: sources %v, good %q (want %s), failures %+v", c.name, rep.Sources, rep.Good, green.SHA, rep.Parsed.Failures)
		}
		if c.name == "test report" && !strings.Contains(rep.Parsed.Failures[0].Output, "assert 10000 == 9500") {
			t.Errorf("the test report's failure lost its text: %+v", rep.Parsed.Failures[0])
		}
	}
	lint := srv.AddPipeline(path, "main", shas[0], "push", bot, &gltest.Job{Name: "lint", Status: "failed", Trace: "golangci-lint: 3 issues\n"})
	if rep, err := d.PipelineReport(ctx, path, lint.ID, "main"); !errors.Is(err, gitlab.ErrNoReport) || !slices.Equal(rep.FailedJobs, []string{"lint"}) {
		t.Errorf("a pipeline without tests: %v, failed jobs %v; want ErrNoReport", err, rep.FailedJobs)
	}
}
