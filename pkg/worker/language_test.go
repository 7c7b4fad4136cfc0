package worker_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// untouchedAgent fails the test if the pipeline lets it run.
type untouchedAgent struct{ t *testing.T }

func (a untouchedAgent) Run(context.Context, *workspace.Workspace, task.Task, io.Writer) (harness.Result, error) {
	a.t.Error("the agent ran on a repository that was not set up")
	return harness.Result{}, errors.New("should not run")
}

// commitTree makes a repository of one commit with files.
func commitTree(t *testing.T, files map[string]string) (dir, head string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if head, err = repo.CommitAll(ctx, "initial"); err != nil {
		t.Fatal(err)
	}
	return dir, head
}

func languagePipeline(t *testing.T, drivers worker.Languages) *worker.Pipeline {
	return &worker.Pipeline{
		NewAgent:  func() worker.Agent { return untouchedAgent{t} },
		Policy:    "scripted",
		Gates:     nil,
		Judge:     judge.NotRun{},
		WorkDir:   t.TempDir(),
		Languages: drivers,
		Log:       zaptest.NewLogger(t),
	}
}

// A Python repository whose dependencies do not install is a task failure
// that no retry mends, naming the setup command and its output; the agent
// never runs.
func TestRepairFailsWhenSetupFails(t *testing.T) {
	t.Parallel()
	if err := exec.Command("/usr/bin/python3", "-c", "import pytest, venv").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with pytest and venv: %v", err)
	}
	// A package index on loopback that has no package.
	index := httptest.NewServer(http.NotFoundHandler())
	defer index.Close()
	dir, head := commitTree(t, map[string]string{
		"pyproject.toml":     "[project]\nname = \"shop\"\n",
		"requirements.txt":   "redfix-no-such-package==1.0\n",
		"tests/test_shop.py": "def test_one():\n    assert True\n",
	})
	drivers := lang.New(golang.Driver{}, python.Driver{IndexURL: index.URL + "/simple", SetupTimeout: 2 * time.Minute})
	p := languagePipeline(t, drivers)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := p.Repair(ctx, task.Task{ID: "task-setup", Fingerprint: "fp-setup", Repo: dir, Commit: head,
		Failures: []task.Failure{{Package: "tests/test_shop.py", Test: "test_one"}}})
	if err == nil {
		t.Fatal("a repository whose setup fails was repaired")
	}
	t.Logf("the failure: %v", err)
	if !errors.Is(err, worker.ErrPermanent) {
		t.Errorf("err = %v, want a permanent failure", err)
	}
	for _, want := range []string{"set up the python repository " + dir, "pip install", "redfix-no-such-package"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// A repository no driver knows is a permanent failure saying so.
func TestRepairFailsWithoutADriver(t *testing.T) {
	t.Parallel()
	dir, head := commitTree(t, map[string]string{"README.md": "# notes\n", "notes.txt": "nothing to run\n"})
	p := languagePipeline(t, lang.New(golang.Driver{}, python.Driver{}))
	_, err := p.Repair(context.Background(), task.Task{ID: "task-none", Fingerprint: "fp-none", Repo: dir, Commit: head,
		Failures: []task.Failure{{Package: "x", Test: "TestX"}}})
	if !errors.Is(err, worker.ErrPermanent) || !errors.Is(err, lang.ErrNoDriver) {
		t.Errorf("err = %v, want a permanent failure for want of a driver", err)
	}
}
