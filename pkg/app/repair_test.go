package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// Without --blame, repair finds the commit that broke the test by
// bisection, here from the commit --good names (probing back from HEAD is
// the Python and TypeScript repairs' way: TestRepairPythonDoctestWithoutBlame,
// TestRepairTypeScriptWithoutBlame), says so, and the pull request names
// it; the attempt is reported under --out. With no model configured, the
// offline policy's patch fixes the boundary.
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
	both := []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--good", s.Good, "--blame", broke}
	if err := Repair(ctx, both, &stdout, &stderr); ExitCode(err) != 2 || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("--good with --blame: %v", err)
	}
	if err := Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--good", "no-such-commit"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--good") {
		t.Fatalf("--good naming no commit: %v", err)
	}
	stdout.Reset()
	if err := Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--good", s.Good, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("repair: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "bisecting from "+s.Good[:12]+" (--good)") {
		t.Errorf("repair does not say it bisects from --good:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "blame: "+broke[:12]) || !strings.Contains(stdout.String(), "found by bisection") {
		t.Errorf("repair does not say which commit bisection blamed:\n%s", stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.patch, "qty >= t.MinQty") {
		t.Errorf("the offline policy's patch does not fix the boundary:\n%s", pr.patch)
	}
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

// A repair whose feedback round fails after the gates rejected its first
// round reports both rounds: each with its steps, how it ended, its gates
// and its patch, and the steps of both in all.
func TestRepairReportsEveryRound(t *testing.T) {
	clearEnv(t)
	edit := func(id, path, old, new string) llm.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": path, "blocks": "<<<<<<< SEARCH\n" + old + "\n=======\n" + new + "\n>>>>>>> REPLACE\n"})
		return call(id, "edit", string(args))
	}
	const fixed, broken = "\t\tif qty >= t.MinQty {", "\t\tif qty > t.MinQty {"
	srv := llmtest.NewServer(t,
		// Round 1: the fix, and a change to the cart that breaks another
		// test; the regression gate rejects it.
		llmtest.Reply{ToolCalls: []llm.ToolCall{edit("a1", "pricing/pricing.go", broken, fixed)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{edit("a2", "cart/cart.go", "\t\t\tc.Lines[i].Qty += qty", "\t\t\tc.Lines[i].Qty = qty")}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a3", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a4", "exit", `{"summary":"Inclusive tiers; simpler cart."}`)}},
		// Round 2, with the gates' evidence: it takes the fix back.
		llmtest.Reply{ToolCalls: []llm.ToolCall{edit("b1", "pricing/pricing.go", fixed, broken)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("b2", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("b3", "exit", `{"summary":"Gave up on the tiers."}`)}},
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("REDFIX_MODEL", "test-model")
	t.Setenv("REDFIX_FEEDBACK_ROUNDS", "1")
	ctx := context.Background()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err = Repair(ctx, []string{"--repo", s.Dir, "--test", "TestVolumeDiscount/at_threshold", "--blame", breakingCommit(t, s.Dir), "--out", out}, &stdout, &stderr)
	if !errors.Is(err, ErrNoPatch) {
		t.Fatalf("err = %v, want no patch\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := len(srv.Requests()); n != 7 {
		t.Fatalf("the model got %d requests, want the 7 turns of two rounds", n)
	}
	if !strings.Contains(err.Error(), "round 1 rejected by regression") || !strings.Contains(err.Error(), "round 2: the agent's last change does not pass the failing tests") {
		t.Errorf("the error does not tell both rounds: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "repair-*"))
	if len(dirs) != 1 {
		t.Fatalf("--out has no report: %v", dirs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{
		"The agent took 7 steps in all, over 2 rounds",
		"### Round 1: rejected\n\n4 steps, stopped by \"exit\": rejected by regression.",
		"- regression: fail: ",
		"TestTotalMergesLines",
		"### Round 2 (a feedback round): tests fail\n\n3 steps, stopped by \"exit\": the agent's last change does not pass the failing tests.\n\nNo gate ran.",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md does not say %q:\n%s", want, report)
		}
	}
	// Each round's patch: the first with the fix and the cart's change,
	// the second with the cart's change alone.
	if n := strings.Count(report, "Its patch:"); n != 2 || strings.Count(report, "+\t\t\tc.Lines[i].Qty = qty") != 2 || strings.Count(report, "+\t\tif qty >= t.MinQty {") != 1 {
		t.Errorf("report.md shows %d patches, want both rounds' with the fix in the first only:\n%s", n, report)
	}
	if strings.Count(report, "No gate ran.") != 1 || strings.Contains(report, "took 3 steps") {
		t.Errorf("report.md reports the last round as if it were the whole repair:\n%s", report)
	}
}
