package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
)

// BenchmarkValidateNestedLineRSS runs `worker validate`, a real process, on
// a patch that mends a Python module and adds to it one line of three
// million bytes, a number in parentheses nested a million and a half deep
// (the shape a security review sent), and prints the peak resident memory
// of the worker and of the commands it ran (the largest of them, as wait4
// reports it) and the gate's verdict. Each run is a process of its own:
//
//	go test -run '^$' -bench BenchmarkValidateNestedLineRSS -benchtime 1x ./pkg/faults/
//
// The gates refuse the patch unread (validators' bounds.go); before they
// did, tree-sitter's reading of the module took the worker to 1.3 GB.
func BenchmarkValidateNestedLineRSS(b *testing.B) {
	pythontest.Require(b)
	bin := binary(b, "worker")
	repo, patch := nestedLineRepo(b)
	for b.Loop() {
		cmd := exec.Command(bin, "validate", "--repo", repo, "--patch", patch, "--test", "tests/test_calc.py::test_add")
		cmd.Env = append(os.Environ(), "REDFIX_DATA_DIR="+b.TempDir(), "REDFIX_LOG_LEVEL=warn")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			b.Fatalf("worker validate: exit %d (%v), want 1 (rejected):\n%s", code, err, out)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Skip("no rusage for the process here")
		}
		peak := float64(ru.Maxrss) / 1024 // kB on Linux
		verdict := "not refused unread"
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "adds a line of") {
				verdict = strings.TrimSpace(l)
			}
		}
		b.Logf("patch %d bytes: worker validate peak RSS %.1f MB; integrity: %s", fileSize(b, patch), peak, verdict)
		b.ReportMetric(peak, "RSS-peak-MB")
	}
}

// nestedLineRepo is a Python project whose test fails at HEAD, and the
// hostile patch to it.
func nestedLineRepo(b *testing.B) (repo, patch string) {
	b.Helper()
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "calc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	r, err := gitrepo.Init(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"pyproject.toml":     "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
		"calc/__init__.py":   "",
		"calc/ops.py":        "def add(x, y):\n    return x - y\n",
		"tests/__init__.py":  "",
		"tests/test_calc.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
	}
	for name, body := range files {
		writeFile(b, filepath.Join(dir, name), body)
	}
	if _, err := r.CommitAll(ctx, "calc"); err != nil {
		b.Fatal(err)
	}
	const n = 1_500_000
	writeFile(b, filepath.Join(dir, "calc/ops.py"), "def add(x, y):\n    return x + y\n\n\nDEEP = "+strings.Repeat("(", n)+"1"+strings.Repeat(")", n)+"\n")
	diff, err := r.Diff(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Git(ctx, "checkout", "--", "."); err != nil {
		b.Fatal(err)
	}
	patch = filepath.Join(b.TempDir(), "nested.diff")
	writeFile(b, patch, diff)
	return dir, patch
}

func writeFile(b *testing.B, p, body string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
}

func fileSize(b *testing.B, p string) int64 {
	b.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}
