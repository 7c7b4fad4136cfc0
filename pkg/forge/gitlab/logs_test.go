package gitlab_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/report"
)

// asTrace wraps a runner's output as GitLab keeps a job's log: the
// runner's preparation and script in collapsible sections (their markers
// ending in a carriage return and an erase-line escape), the command
// echoed in colour, the job's end in red.
func asTrace(out []byte) string {
	var b strings.Builder
	b.WriteString("\x1b[0KRunning with gitlab-runner 17.5.0 (abcdef01)\x1b[0;m\n")
	b.WriteString("section_start:1764580000:prepare_script\r\x1b[0K\x1b[0K\x1b[36;1mPreparing environment\x1b[0;m\x1b[0;m\n")
	b.WriteString("Running on runner-1 via host...\nsection_end:1764580001:prepare_script\r\x1b[0K\n")
	b.WriteString("section_start:1764580002:step_script\r\x1b[0K\x1b[0K\x1b[36;1mExecuting \"step_script\" stage of the job script\x1b[0;m\x1b[0;m\n")
	b.WriteString("\x1b[32;1m$ make test\x1b[0;m\n")
	b.WriteString(strings.ReplaceAll(string(out), "\r\n", "\n"))
	b.WriteString("section_end:1764580009:step_script\r\x1b[0K\n")
	b.WriteString("\x1b[31;1mERROR: Job failed: exit code 1\n\x1b[0;m\n")
	return b.String()
}

// consoleIDs reads a driver's console fixture and the report of the same
// run (pkg/lang/<driver>/testdata/console; counterpart is NAME.xml unless
// named): the log, and the report's failures and build failures with
// their kinds.
func consoleIDs(t *testing.T, driver, name, counterpart string) ([]byte, []string) {
	t.Helper()
	log, res := joblogtest.Fixture(t, filepath.Join("..", "..", "lang", driver, "testdata", "console"), name, counterpart)
	return log, joblogtest.FailureIDs(res)
}

// A failed pipeline whose job kept no archive and no test report, and
// printed pytest's, vitest's, node:test's or go test's output to its log,
// gives that report: the failures and build failures of the runner's
// JUnit report (go test -json) of the same run, the log named as their
// source.
func TestPipelineReportFromConsoleLogs(t *testing.T) {
	ctx := context.Background()
	srv := gltest.New(t)
	bot := srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	srv.AddGroupMember("acme", bot, gltest.Developer)
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	const path = "acme/shop"
	srv.CreateProject(path, dir)
	out, _ := srv.Git(path, "rev-parse", "main")
	sha := strings.TrimSpace(out)
	d, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken, Logs: all.Logs()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ driver, name, junit string }{{"python", "pytest-verbose", ""}, {"python", "pytest-collect", ""}, {"node", "vitest", ""}, {"node", "node-tap", ""}, {"golang", "gotest-verbose", "gotest.json"}} {
		log, want := consoleIDs(t, c.driver, c.name, c.junit)
		pl := srv.AddPipeline(path, "main", sha, "push", bot, &gltest.Job{Name: "test", Status: "failed", Trace: asTrace(log)})
		rep, err := d.PipelineReport(ctx, path, pl.ID, "main")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := joblogtest.FailureIDs(rep.Parsed); !slices.Equal(got, want) {
			t.Errorf("%s: from the trace:\n%s\nfrom the JUnit report of the same run:\n%s", c.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !slices.Equal(rep.Sources, []string{"log of job test"}) {
			t.Errorf("%s: sources %v", c.name, rep.Sources)
		}
		if again, err := report.Parse(rep.Data); err != nil || !slices.Equal(joblogtest.FailureIDs(again), want) {
			t.Errorf("%s: the report kept for audit reads as %v, %v", c.name, joblogtest.FailureIDs(again), err)
		}
	}
	// A forge without a log reader does not read the logs.
	plain, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := consoleIDs(t, "python", "pytest-default", "")
	pl := srv.AddPipeline(path, "main", sha, "push", bot, &gltest.Job{Name: "test", Status: "failed", Trace: asTrace(log)})
	if _, err := plain.PipelineReport(ctx, path, pl.ID, "main"); err != gitlab.ErrNoReport {
		t.Errorf("without a log reader: %v, want ErrNoReport", err)
	}
}
