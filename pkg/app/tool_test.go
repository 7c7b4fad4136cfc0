package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
)

func toolRepo(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/calc\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b + 1\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "calc.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "calc"); err != nil {
		t.Fatal(err)
	}
	// A file outside the clone that the tool must not reach.
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestToolCommand(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir := toolRepo(t)
	run := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := Tool(ctx, args, &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}

	out, _, err := run("--list")
	if err != nil || !strings.Contains(out, "read_file\n") || !strings.Contains(out, "start_line=<integer>") || !strings.Contains(out, "path=<string, required>") || strings.Count(out, "\n    ") < 15 {
		t.Fatalf("--list: %v\n%s", err, out)
	}

	out, _, err = run("--repo", dir, "read_file", "path=calc.go", "start_line=4", "end_line=5")
	if err != nil || !strings.Contains(out, "func Add(a, b int) int {") || strings.Contains(out, "// Add adds.") {
		t.Fatalf("read_file with a range: %v\n%s", err, out)
	}
	out, _, err = run("--repo", dir, "search_method", "name=Add")
	if err != nil || !strings.Contains(out, "calc.go") || !strings.Contains(out, "return a + b + 1") {
		t.Fatalf("search_method: %v\n%s", err, out)
	}

	// Confined as in an episode: the observation says so, and the exit
	// status says the action reported a problem.
	out, _, err = run("--repo", dir, "read_file", "path=../secret.txt")
	if err != ErrToolProblem || strings.Contains(out, "s3cret") || !strings.Contains(out, "outside") {
		t.Fatalf("read outside the clone: %v\n%s", err, out)
	}

	// An edit with explicit blocks changes the clone.
	blocks := "<<<<<<< SEARCH\n\treturn a + b + 1\n=======\n\treturn a + b\n>>>>>>> REPLACE"
	if out, _, err = run("--repo", dir, "edit", "path=calc.go", "blocks="+blocks); err != nil {
		t.Fatalf("edit: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), "return a + b\n") {
		t.Fatalf("the edit did not reach the clone:\n%s", b)
	}

	for _, args := range [][]string{
		{"--repo", dir},
		{"--repo", dir, "frobnicate"},
		{"--repo", dir, "read_file"},                     // path is required
		{"--repo", dir, "read_file", "path=a", "line=3"}, // not a parameter
		{"--repo", dir, "go_to_line", "path=a", "line=x"},
		{"--repo", dir, "read_file", "calc.go"},
	} {
		if _, _, err := run(args...); ExitCode(err) != 2 {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	if _, _, err := run("--repo", t.TempDir(), "read_directory"); err == nil || ExitCode(err) != 1 {
		t.Errorf("not a repository: err = %v", err)
	}
}

// worker tool runs the clone's tests confined, like a worker: a test that
// writes outside the clone writes into the sandbox's private /tmp, never the
// host's.
func TestToolRunsTestsConfined(t *testing.T) {
	clearEnv(t)
	if _, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()}); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	t.Setenv("REDFIX_SANDBOX", "required")
	t.Setenv("REDFIX_DATA_DIR", t.TempDir())
	ctx := context.Background()
	dir := toolRepo(t)
	outside := filepath.Join(t.TempDir(), "escaped")
	test := "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestEscape(t *testing.T) {\n\t_ = os.WriteFile(" + strconv.Quote(outside) + ", []byte(\"out\"), 0o644)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "escape_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (gitrepo.Repo{Dir: dir}).CommitAll(ctx, "a test that writes outside"); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := Tool(ctx, []string{"--repo", dir, "--test", "TestEscape", "run_tests"}, &stdout, &stderr); err != nil {
		t.Fatalf("run_tests: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "TestEscape") {
		t.Fatalf("the test did not run:\n%s", stdout.String())
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a test run by worker tool wrote outside the clone: it ran unconfined")
	}
}
