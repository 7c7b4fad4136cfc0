package python

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

var _ lang.Driver = Driver{}

// confined is a context whose commands run in a sandbox that must confine:
// under CI=true a host that cannot is a failure, elsewhere the test is
// skipped with the reason. Each test has its own cache directory.
func confined(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	box, err := sandbox.New(ctx, sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	return sandbox.WithRepo(sandbox.With(ctx, box), "example.com/"+t.Name())
}

// pythonDriver is the driver on Debian's interpreter, which has pytest,
// coverage and pyflakes (python3-pytest, python3-coverage, pyflakes3):
// CI installs them; elsewhere a host without them skips.
func pythonDriver(t *testing.T) Driver {
	t.Helper()
	d := Driver{}
	py, err := d.interpreter()
	if err == nil {
		err = exec.Command(py, "-c", "import pytest, coverage, pyflakes").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have Python with pytest, coverage and pyflakes (.ci/run installs them): %v", err)
		}
		t.Skipf("no Python with pytest, coverage and pyflakes here: %v", err)
	}
	return d
}

// writeTree writes files (slash paths relative to dir) into dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeBench(b *testing.B, dir, name, text string) {
	b.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
}

// repo is a checkout made of files.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, files)
	return dir
}

// failureOf is the failure of id in fs, ok false when there is none.
func failureOf(fs []task.Failure, id string) (task.Failure, bool) {
	for _, f := range fs {
		if f.ID() == id {
			return f, true
		}
	}
	return task.Failure{}, false
}

func ids(fs []task.Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID())
	}
	return out
}

// mustRun runs ids and fails the test on an error.
func mustRun(t *testing.T, ctx context.Context, d Driver, dir string, count int, ids ...string) testrun.Outcome {
	t.Helper()
	o, err := d.Run(ctx, dir, ids, count)
	if err != nil {
		t.Fatalf("Run(%q): %v", ids, err)
	}
	return o
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func contains(hay []string, needle string) bool {
	for _, s := range hay {
		if strings.Contains(s, needle) {
			return true
		}
	}
	return false
}
