package triage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// CI's frames name CI's checkout; the task's are relative to the
// repository, learnt from the reproduction's frames.
func TestRelativeFailures(t *testing.T) {
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
	got := relativeFailures(dir, ci, rep)
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
