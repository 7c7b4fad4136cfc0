package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
)

// pytestPasses checks out rev in a worktree of repo and runs pytest there,
// independently of redfix's drivers.
func pytestPasses(t *testing.T, repo, rev string) bool {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "wt")
	r := gitrepo.Repo{Dir: repo}
	if _, err := r.Git(ctx, "worktree", "add", "-q", "--detach", dir, rev); err != nil {
		t.Fatal(err)
	}
	defer r.Git(ctx, "worktree", "remove", "--force", dir) //nolint:errcheck
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("pytest at %s: %v\n%s", rev, err, out)
	}
	return err == nil
}

const pyAtThreshold = "tests/test_discount.py::test_volume_discount[at_threshold]"

func TestDemoPythonOfflineEndToEnd(t *testing.T) {
	clearEnv(t)
	pythontest.Require(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := Demo(context.Background(), []string{"--out", out, "--lang", "python"}, &stdout, &stderr)

	// The sample's CI ran pytest through the Python driver: the report the
	// demo prints and posts names the failing test by its node id.
	for _, want := range []string{
		"] ci        sample repository " + filepath.Join(out, "repo") + ": 6 commits",
		"7 tests, 1 failing",
		"FAIL " + pyAtThreshold + ": AssertionError: assert 10000 == 9500",
		"] ingest    POST ",
		"→ 202 Accepted",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, stdout.String(), stderr.String())
		}
	}
	if t.Failed() {
		return
	}

	if err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, stage := range []string{"triage", "workspace", "agent", "gate", "publish", "verify"} {
		if !strings.Contains(stdout.String(), "] "+stage) {
			t.Errorf("stage %q was not printed:\n%s", stage, stdout.String())
		}
	}
	repo := filepath.Join(out, "repo")
	blame := breakingCommit(t, repo)
	if !strings.Contains(stdout.String(), "bisected") || !strings.Contains(stdout.String(), task.Short(blame)) {
		t.Errorf("triage did not bisect to the breaking commit %s:\n%s", task.Short(blame), stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.body, blame[:12]) || !strings.Contains(pr.body, pyAtThreshold) {
		t.Errorf("pull_request.md does not name the breaking commit %s and the failing test:\n%s", blame[:12], pr.body)
	}
	if !strings.Contains(pr.patch, "qty >= t.min_qty") {
		t.Errorf("patch does not fix the boundary:\n%s", pr.patch)
	}
	if !strings.Contains(pr.trajectory, `"policy":"offline"`) {
		t.Error("trajectory is not the offline policy's")
	}
	for _, g := range []string{"integrity", "revert", "static", "oracle", "regression"} {
		if v := gate(pr.gates, g); v != task.GatePass {
			t.Errorf("gate %s: %s", g, v)
		}
	}
	branch := "redfix/" + strings.TrimPrefix(filepath.Base(pr.dir), "redfix-")
	if !strings.Contains(stdout.String(), "python3 -m pytest fails at main and passes at "+branch) {
		t.Errorf("no verify line for %s:\n%s", branch, stdout.String())
	}
	if pytestPasses(t, repo, "main") {
		t.Error("pytest passes at main: the demo has no failure to fix")
	}
	if !pytestPasses(t, repo, branch) {
		t.Errorf("pytest fails at %s", branch)
	}
}

func TestDemoUnknownLanguageIsAUsageError(t *testing.T) {
	clearEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := Demo(context.Background(), []string{"--out", out, "--lang", "rust"}, &stdout, &stderr)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), `"rust"`) || !strings.Contains(err.Error(), "choices: go, python, typescript, javascript") {
		t.Fatalf("err = %v (exit %d), want a usage error naming rust and the choices go, python, typescript, javascript", err, ExitCode(err))
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a demo with an unknown language wrote %s: %v", out, err)
	}
}

// The demo's last stage, on this branch already: the Python sample's
// driver runs its tests at main and at a branch that fixes the boundary,
// and a branch that does not is caught.
func TestDemoVerifiesThePythonSampleThroughItsDriver(t *testing.T) {
	clearEnv(t)
	pythontest.Require(t)
	ctx := context.Background()
	drivers, err := languages(config.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), "repo"), demo.Options{Lang: "python", Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	if s.Driver.Name() != "python" {
		t.Fatalf("the sample's driver is %s, want python", s.Driver.Name())
	}
	repo := gitrepo.Repo{Dir: s.Dir}
	branchWith := func(tk task.Task, old, new string) {
		t.Helper()
		branch := publish.Branch(tk)
		if _, err := repo.Git(ctx, "checkout", "-q", "-b", branch, "main"); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.Dir, "shop", "pricing.py")
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Git(ctx, "commit", "-q", "-am", "a candidate"); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Git(ctx, "checkout", "-q", "main"); err != nil {
			t.Fatal(err)
		}
	}
	fixed := task.Task{ID: "t1", Fingerprint: "f1xed", PullRequest: "file:///pr"}
	branchWith(fixed, "if qty > t.min_qty:", "if qty >= t.min_qty:")
	var out bytes.Buffer
	p := &stagePrinter{w: &out, t0: time.Now()}
	if err := verify(ctx, p, s, fixed); err != nil {
		t.Fatalf("verify a branch that fixes the boundary: %v\n%s", err, out.String())
	}
	if want := "python3 -m pytest fails at main and passes at " + publish.Branch(fixed); !strings.Contains(out.String(), want) {
		t.Errorf("verify printed:\n%s\nwant %q", out.String(), want)
	}
	// A candidate that special-cases the other side leaves the test red.
	wrong := task.Task{ID: "t2", Fingerprint: "wr0ng", PullRequest: "file:///pr"}
	branchWith(wrong, "if qty > t.min_qty:", "if qty > t.min_qty + 1:")
	out.Reset()
	if err := verify(ctx, p, s, wrong); err == nil {
		t.Fatalf("verify passed a branch that does not fix the failure:\n%s", out.String())
	}
	if want := "python3 -m pytest fails at main and fails at " + publish.Branch(wrong); !strings.Contains(out.String(), want) {
		t.Errorf("verify printed:\n%s\nwant %q", out.String(), want)
	}
}
