// Package pythontest holds what tests of Python repositories share across
// packages: a check that Debian's Python with pytest is here (a skip
// elsewhere, a failure under CI), a confining sandbox, and git histories
// written from txtar archives, one commit each, into real repositories.
package pythontest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
)

// Python is the interpreter the tests run Python repositories with:
// Debian's, which has pytest (python3-pytest) and coverage
// (python3-coverage).
const Python = "/usr/bin/python3"

// Require skips t when Python with pytest is not here, and fails it under
// CI=true, where .ci/run installs it.
func Require(t testing.TB) {
	t.Helper()
	if err := exec.Command(Python, "-c", "import pytest").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have %s with pytest (.ci/run installs python3-pytest): %v", Python, err)
		}
		t.Skipf("no %s with pytest here: %v", Python, err)
	}
}

// Confined is a context whose commands run in a sandbox that must confine,
// with a cache directory of the test's own, for the repository repo: under
// CI=true a host that cannot confine fails the test, elsewhere it is
// skipped with the reason.
func Confined(t testing.TB, repo string) context.Context {
	t.Helper()
	ctx := context.Background()
	box, err := sandbox.New(ctx, sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	return sandbox.WithRepo(sandbox.With(ctx, box), repo)
}

// History makes a git repository in t's temporary directory and commits
// each archive in turn: the archive's comment is the commit's message, its
// files are written (over the previous commit's), and a file whose whole
// content is "(deleted)\n" is removed. It returns the repository's
// directory and the commits, oldest first.
func History(t testing.TB, archives ...string) (dir string, commits []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range archives {
		ar := txtar.Parse([]byte(a))
		for _, f := range ar.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if string(f.Data) == "(deleted)\n" {
				if err := os.Remove(p); err != nil {
					t.Fatalf("archive %d: %v", i, err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		msg := strings.TrimSpace(string(ar.Comment))
		if msg == "" {
			t.Fatalf("archive %d has no commit message (its comment)", i)
		}
		sha, err := repo.CommitAll(ctx, msg)
		if err != nil {
			t.Fatalf("archive %d: %v", i, err)
		}
		commits = append(commits, sha)
	}
	return dir, commits
}

// JUnitAt is the JUnit XML report pytest writes for the repository at dir
// at commit, as CI would post it: the commit is exported into a directory
// of its own (CI's checkout, whose absolute path the report's tracebacks
// may name) and its tests run there, unconfined, writing nothing into dir.
func JUnitAt(t testing.TB, dir, commit string) []byte {
	t.Helper()
	_, junit := RunAt(t, dir, commit)
	return junit
}

// RunAt runs pytest as JUnitAt does, and returns what it printed (CI's
// job log of the run, pytest's default output) with the JUnit report.
func RunAt(t testing.TB, dir, commit string) (console, junit []byte) {
	t.Helper()
	Require(t)
	ci := filepath.Join(t.TempDir(), "ci", "checkout")
	if err := os.MkdirAll(ci, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("git", "-C", dir, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", ci)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("untar %s: %v", commit, err)
	}
	report := filepath.Join(t.TempDir(), "junit.xml")
	cmd := exec.Command(Python, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml="+report)
	cmd.Dir = ci
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("pytest at %s: %v\n%s", commit, err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("pytest at %s wrote no report: %v\n%s", commit, err, out)
	}
	return out, data
}
