package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/demo"
)

// Without --blame, repair finds the commit that broke the test by
// bisection (probing back from HEAD for a good commit), says so, and the
// pull request names it; the attempt is reported under --out.
func TestRepairWithoutBlameBisects(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	broke := breakingCommit(t, s.Dir)
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	if err := Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("repair: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "blame: "+broke[:12]) || !strings.Contains(stdout.String(), "found by bisection") {
		t.Errorf("repair does not say which commit bisection blamed:\n%s", stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.body, broke[:12]) || !strings.Contains(pr.body, "Found by bisecting") {
		t.Errorf("the pull request does not name the blamed commit %s:\n%s", broke[:12], pr.body)
	}
	reports, _ := filepath.Glob(filepath.Join(out, "repair-*", "report.md"))
	if len(reports) != 1 {
		t.Fatalf("no report of the attempt under %s", out)
	}
	if b, _ := os.ReadFile(reports[0]); !strings.Contains(string(b), "found by bisection") {
		t.Errorf("report.md:\n%s", b)
	}
}

// With no patch, repair still writes its trajectory and a report of what it
// tried, and ends with one line that says why it stopped.
func TestRepairWithoutPatchReportsTheAttempt(t *testing.T) {
	clearEnv(t)
	t.Setenv("REDFIX_MAX_STEPS", "3")
	ctx := context.Background()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "nothing-yet")
	var stdout, stderr bytes.Buffer
	err = Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--blame", breakingCommit(t, s.Dir), "--out", out}, &stdout, &stderr)
	if !errors.Is(err, ErrNoPatch) {
		t.Fatalf("err = %v, want no patch\n%s", err, stdout.String())
	}
	if strings.Contains(err.Error(), "passed the gates") {
		t.Errorf("no gate ran, yet the error speaks of gates: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "stopped: the agent made no change") || strings.HasSuffix(last, ":") {
		t.Errorf("last line = %q", last)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "repair-*"))
	if len(dirs) != 1 {
		t.Fatalf("--out has no report: %v", dirs)
	}
	for _, name := range []string{"report.md", "trajectory.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dirs[0], "report.md")); !strings.Contains(string(b), "No gate ran.") || !strings.Contains(string(b), "took 3 steps") {
		t.Errorf("report.md:\n%s", b)
	}
}
