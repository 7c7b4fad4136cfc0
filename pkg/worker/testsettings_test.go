package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
)

// A repository whose .redfix.yaml gives its test runner an option the
// driver refuses (one that chooses the tests) is a permanent failure
// naming the option and the file; the agent never runs.
func TestRepairRefusesTestSettingsTheDriverRefuses(t *testing.T) {
	t.Parallel()
	dir, head := commitTree(t, map[string]string{
		"go.mod":       "module example.com/m\n\ngo 1.22\n",
		"m_test.go":    "package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		".redfix.yaml": "version: 1\ntests:\n  env: {TZ: UTC}\n  args: [\"-run=TestX\"]\n",
	})
	p := languagePipeline(t, lang.New(golang.Driver{}))
	p.RepoPolicies = &repoconfig.Loader{Central: func(string) repoconfig.Central { return repoconfig.Central{Enabled: true} }}
	_, err := p.Repair(context.Background(), task.Task{ID: "task-args", Fingerprint: "fp-args", Repo: dir, Commit: head,
		Failures: []task.Failure{{Package: "example.com/m", Test: "TestX"}}})
	if !errors.Is(err, worker.ErrPermanent) {
		t.Fatalf("err = %v, want a permanent failure", err)
	}
	for _, want := range []string{"the test settings of " + dir + "'s .redfix.yaml at " + head, `"-run=TestX"`, "not an option this driver takes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
