package nodetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// JUnitAt is the JUnit XML report the repository at dir writes at commit,
// as CI would post it: the commit is exported into a directory of its own
// (CI's checkout, whose absolute path the report's stacks may name), its
// packages installed once into the cache directory and linked in, and its
// tests run there, unconfined, writing nothing into dir. The runner is
// the one its package.json names: vitest's junit reporter, jest with
// jest-junit (its default dialect), or node:test's junit reporter.
func JUnitAt(t testing.TB, dir, commit string) []byte {
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
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	data, err := os.ReadFile(filepath.Join(ci, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &pkg)
	}
	if err != nil {
		t.Fatalf("package.json at %s: %v", commit, err)
	}
	if len(pkg.DevDependencies) > 0 {
		if err := os.Symlink(installed(t, ci), filepath.Join(ci, "node_modules")); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(t.TempDir(), "junit.xml")
	var cmd *exec.Cmd
	switch {
	case pkg.DevDependencies["vitest"] != "":
		cmd = exec.Command("node", "node_modules/vitest/vitest.mjs", "run", "--reporter=junit", "--outputFile="+report)
	case pkg.DevDependencies["jest"] != "":
		cmd = exec.Command("node", "node_modules/jest/bin/jest.js", "--ci", "--reporters=jest-junit")
		cmd.Env = append(os.Environ(), "JEST_JUNIT_OUTPUT_FILE="+report)
	case len(pkg.DevDependencies) == 0:
		cmd = exec.Command("node", "--test", "--test-reporter=junit", "--test-reporter-destination="+report)
	default:
		t.Fatalf("JUnitAt: no JUnit reporter known for the runner of %s at %s", dir, commit)
	}
	cmd.Dir = ci
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("tests at %s: %v\n%s", commit, err, out)
	}
	data, err = os.ReadFile(report)
	if err != nil {
		t.Fatalf("tests at %s wrote no report: %v\n%s", commit, err, out)
	}
	return data
}
