package triage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
)

// CI's frames name CI's checkout; the task's are relative to the
// repository, learnt from the reproduction's frames.
func TestRelativeFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ci := []task.Failure{{
		Package: "example.com/m/tbl", Test: "TestTable/#05",
		Message: "panic: assignment to entry in nil map",
		Output:  "panic: assignment to entry in nil map\n\t/home/runner/work/m/m/tbl/tbl.go:5 +0x1d\n\t/home/runner/work/m/m/tbl/tbl_test.go:18 +0x2e\n",
		Frames:  []string{"/home/runner/work/m/m/tbl/tbl.go:5", "/home/runner/work/m/m/tbl/tbl_test.go:18", "tbl_test.go:9"},
	}}
	rep := Reproduction{Tests: []TestEvidence{{Test: "example.com/m/tbl.TestTable/#05", Failure: &task.Failure{Frames: []string{"tbl/tbl.go:5"}}}}}
	got := relativeFailures(golang.Driver{}, dir, ci, rep)
	if want := []string{"tbl/tbl.go:5", "tbl/tbl_test.go:18", "tbl/tbl_test.go:9"}; !slices.Equal(got[0].Frames, want) {
		t.Errorf("frames = %v, want %v", got[0].Frames, want)
	}
	if strings.Contains(got[0].Output, "/home/runner") {
		t.Errorf("output keeps CI's paths:\n%s", got[0].Output)
	}
	if ci[0].Frames[0] != "/home/runner/work/m/m/tbl/tbl.go:5" {
		t.Error("the report's failures were changed in place")
	}
}

// A Python failure's traceback as CI's pytest printed it (native style,
// CI's absolute paths) becomes relative to the repository, learnt from
// pytest's frames in the reproduction; its test gets pytest's node id.
func TestRelativeFailuresPython(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{"pyproject.toml": "[project]\nname = \"calc\"\n", "calc/ops.py": "def total(xs):\n    return 0\n", "tests/test_calc.py": "def test_total():\n    pass\n"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := "/home/runner/work/calc/calc/"
	ci := []task.Failure{{
		Package: "tests.test_calc", Test: "test_total",
		Message: "AssertionError: assert 2 == 3",
		Output:  "Traceback (most recent call last):\n  File \"" + root + "tests/test_calc.py\", line 9, in test_total\n  File \"" + root + "calc/ops.py\", line 7, in total\nAssertionError: assert 2 == 3\n",
		Frames:  []string{root + "calc/ops.py:7", root + "tests/test_calc.py:9"},
	}}
	rep := Reproduction{Tests: []TestEvidence{{Test: "tests/test_calc.py::test_total", Failure: &task.Failure{Frames: []string{"calc/ops.py:7", "tests/test_calc.py:9"}}}}}
	got := canonicalFailures(python.Driver{}, dir, relativeFailures(python.Driver{}, dir, ci, rep))
	if want := []string{"calc/ops.py:7", "tests/test_calc.py:9"}; !slices.Equal(got[0].Frames, want) {
		t.Errorf("frames = %v, want %v", got[0].Frames, want)
	}
	if strings.Contains(got[0].Output, "/home/runner") {
		t.Errorf("output keeps CI's paths:\n%s", got[0].Output)
	}
	if got[0].ID() != "tests/test_calc.py::test_total" || got[0].Message != ci[0].Message {
		t.Errorf("failure %s: %q, want the node id with CI's message", got[0].ID(), got[0].Message)
	}
	// Go's failures keep their import paths.
	if fs := canonicalFailures(nil, dir, ci); fs[0].ID() != "tests.test_calc.test_total" {
		t.Errorf("without a language: %s", fs[0].ID())
	}
}

// A test file named by CI's absolute path is named by its path in the
// checkout: the longest ending of it that is a file there; a path that
// ends in no file of the checkout, or only in a link, stays as it was.
func TestCheckoutFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"test/tally.test.js", "tally.test.js", "other/real.test.js"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	ci := []task.Failure{
		{Package: "/home/runner/work/tally/tally/test/tally.test.js"},
		{Package: "/home/runner/work/tally/tally/test/gone.test.js"},
		{Package: "/home/runner/work/tally/tally/linked/real.test.js"},
		{Package: "example.com/m/x", Test: "TestX"},
	}
	got := checkoutFiles(dir, ci)
	want := []string{"test/tally.test.js", ci[1].Package, ci[2].Package, "example.com/m/x"}
	for i, f := range got {
		if f.Package != want[i] {
			t.Errorf("%s: %q, want %q", ci[i].Package, f.Package, want[i])
		}
	}
}
