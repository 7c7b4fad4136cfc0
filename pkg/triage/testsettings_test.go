package triage

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// zoneHistory is a Python project whose test passes only in New York's
// time zone, as its .redfix.yaml says; its third commit breaks the test
// in every zone.
var zoneHistory = []string{
	"when: the zone of the epoch\n\n-- pyproject.toml --\n[project]\nname = \"when\"\nversion = \"0.1.0\"\n" +
		"-- .redfix.yaml --\nversion: 1\ntests:\n  env: {TZ: America/New_York}\n" +
		"-- when.py --\nimport time\n\n\ndef zone():\n    return time.strftime(\"%Z\", time.localtime(0))\n" +
		"-- test_when.py --\nimport when\n\n\ndef test_zone():\n    assert when.zone() == \"EST\"\n",
	"when: a readme\n\n-- README.md --\nwhen tells zones.\n",
	"when: zones in lower case\n\n-- when.py --\nimport time\n\n\ndef zone():\n    return time.strftime(\"%Z\", time.localtime(0)).lower()\n",
	"when: a note\n\n-- README.md --\nwhen tells zones, in lower case.\n",
}

// TestProcessRunsTheTestsWithTheirSettings: triage reruns and bisects a
// repository's tests with its .redfix.yaml's test settings, and the task
// records them; held by a central configuration that locks them, the
// runs are in UTC, where the test fails at every commit: no commit is
// blamed, and when CI named its last green commit the task fails, naming
// the test and that commit and pointing to the tests: section, instead
// of going to a repair whose test results could not be trusted.
func TestProcessRunsTheTestsWithTheirSettings(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	dir, shas := pythontest.History(t, zoneHistory...)
	head := shas[len(shas)-1]
	rep, err := report.ParseJUnit(bytes.NewReader(pythontest.JUnitAt(t, dir, head)))
	if err != nil || len(rep.Failures) != 1 {
		t.Fatalf("CI's report: %+v, %v; want one failure", rep.Failures, err)
	}
	locked := repoconfig.Central{Enabled: true, TestsLocked: true}
	for _, c := range []struct {
		name     string
		central  repoconfig.Central
		good     string // CI's last green commit
		status   task.Status
		blame    string
		settings string
		reason   []string
	}{
		{"the file's settings", repoconfig.Central{Enabled: true}, "", task.StatusQueued, shas[2], "env TZ=America/New_York", nil},
		{"the file's settings from CI's good", repoconfig.Central{Enabled: true}, shas[1], task.StatusQueued, shas[2], "env TZ=America/New_York", nil},
		{"held by central", locked, "", task.StatusQueued, "", "", nil},
		{"held by central, CI's good red here", locked, shas[1], task.StatusFailed, "", "",
			[]string{"not reproducible here", "test_when.py::test_zone", task.Short(shas[1]), "tests: section"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := pythonContext(t, dir)
			loader := &repoconfig.Loader{Central: func(string) repoconfig.Central { return c.central }}
			store, queue := newMemStore(), &memQueue{}
			tr := New(store, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir(), Languages: drivers(python.Driver{Python: pythontest.Python}), RepoPolicies: loader}, zaptest.NewLogger(t))
			outs, err := tr.Process(ctx, Input{Repo: dir, Commit: head, Good: c.good, Branch: "main", Report: rep})
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 1 || outs[0].Task == nil {
				t.Fatalf("outcomes = %+v, want one with a task", outs)
			}
			tk := *outs[0].Task
			t.Logf("%s: %s, blame %s, settings %q", outs[0].Status, outs[0].Reason, task.Short(tk.Bisection.Blame), tk.TestSettings)
			if outs[0].Status != c.status {
				t.Errorf("status %s (%s), want %s", outs[0].Status, outs[0].Reason, c.status)
			}
			if tk.TestSettings != c.settings {
				t.Errorf("the task's test settings are %q, want %q", tk.TestSettings, c.settings)
			}
			if tk.Bisection.Blame != c.blame {
				t.Errorf("blame %s (%s), want %q", task.Short(tk.Bisection.Blame), tk.Bisection.Subject, task.Short(c.blame))
			}
			for _, w := range c.reason {
				if !strings.Contains(outs[0].Reason, w) {
					t.Errorf("reason %q does not say %q", outs[0].Reason, w)
				}
			}
			if got := len(queue.jobs); (c.status == task.StatusQueued) != (got == 1) {
				t.Errorf("%d jobs queued for a %s task", got, c.status)
			}
		})
	}
}
