package report

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// A parent that logged a line of its own and failed only because a
// subtest did is reported with the subtest's assertion as its message, not
// with its own last log line.
func TestParentOfAFailingSubtestTakesItsMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"p/p_test.go": `package p

import "testing"

func TestTable(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("leap", func(t *testing.T) { t.Errorf("IsLeap(1900) = true, want false") })
	t.Logf("skipped: %d", 18)
}
`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-json", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	res, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := failureByTest(res.Failures, "TestTable/leap")
	if !ok || sub.Message != "IsLeap(1900) = true, want false" {
		t.Fatalf("subtest: %+v in %+v", sub, res.Failures)
	}
	parent, ok := failureByTest(res.Failures, "TestTable")
	if !ok {
		t.Fatalf("the parent, which printed a line of its own, is not reported: %+v", res.Failures)
	}
	if parent.Message != sub.Message || !slices.Equal(parent.Frames, sub.Frames) {
		t.Errorf("parent message %q, frames %q; want the subtest's %q, %q", parent.Message, parent.Frames, sub.Message, sub.Frames)
	}
}
