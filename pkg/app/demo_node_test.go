package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// vitestFailures runs vitest at rev of repo, independently of redfix's
// drivers (nodetest's own install, unconfined, writing nothing into
// repo), and returns the ids of the tests its JUnit report says failed.
func vitestFailures(t *testing.T, repo, rev string) []string {
	t.Helper()
	rep, err := report.Parse(nodetest.JUnitAt(t, repo, rev))
	if err != nil {
		t.Fatalf("vitest's report at %s: %v", rev, err)
	}
	if rep.Total == 0 {
		t.Fatalf("vitest ran no test at %s", rev)
	}
	var ids []string
	for _, f := range rep.Failures {
		ids = append(ids, f.ID())
	}
	return ids
}

const tsAtThreshold = "src/discount.test.ts::volume discount > at the threshold"

// bot demo --lang typescript: the TypeScript sample's CI runs vitest
// through the node driver, triage reproduces and bisects the failure, the
// offline policy repairs it, every gate holds it to the node driver's
// rules, and the pull request's branch turns vitest green.
func TestDemoTypeScriptOfflineEndToEnd(t *testing.T) {
	clearEnv(t)
	nodetest.Require(t)
	t.Setenv("REDFIX_NODE_CACHE_DIR", nodetest.CacheDir(t))
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := Demo(context.Background(), []string{"--out", out, "--lang", "typescript"}, &stdout, &stderr)

	for _, want := range []string{
		"] ci        sample repository " + filepath.Join(out, "repo") + ": 6 commits",
		"8 tests, 1 failing",
		"FAIL " + tsAtThreshold + ": expected 10000 to be 9500",
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
	for _, stage := range []string{"triage", "workspace", "setup", "agent", "gate", "publish", "verify"} {
		if !strings.Contains(stdout.String(), "] "+stage) {
			t.Errorf("stage %q was not printed:\n%s", stage, stdout.String())
		}
	}
	repo := filepath.Join(out, "repo")
	blame := breakingCommit(t, repo)
	if !strings.Contains(stdout.String(), "reliable") || !strings.Contains(stdout.String(), "bisected") || !strings.Contains(stdout.String(), task.Short(blame)) {
		t.Errorf("triage did not find the failure reliable and bisect it to the breaking commit %s:\n%s", task.Short(blame), stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.body, blame[:12]) || !strings.Contains(pr.body, tsAtThreshold) {
		t.Errorf("pull_request.md does not name the breaking commit %s and the failing test:\n%s", blame[:12], pr.body)
	}
	if !strings.Contains(pr.patch, "+      if (qty >= t.minQty) {") || strings.Contains(pr.patch, ".test.ts") {
		t.Errorf("patch does not fix the boundary in the code alone:\n%s", pr.patch)
	}
	if !strings.Contains(pr.trajectory, `"policy":"offline"`) {
		t.Error("trajectory is not the offline policy's")
	}
	for _, g := range []string{"integrity", "revert", "static", "oracle", "regression"} {
		if v := gate(pr.gates, g); v != task.GatePass {
			t.Errorf("gate %s: %s", g, v)
		}
	}
	if !strings.Contains(stdout.String(), "node driver's checks") {
		t.Errorf("the static gate did not run the node driver's checks:\n%s", stdout.String())
	}
	branch := "redfix/" + strings.TrimPrefix(filepath.Base(pr.dir), "redfix-")
	if !strings.Contains(stdout.String(), "npx vitest run fails at main and passes at "+branch) {
		t.Errorf("no verify line for %s:\n%s", branch, stdout.String())
	}
	if got := vitestFailures(t, repo, "main"); len(got) != 1 || got[0] != tsAtThreshold {
		t.Errorf("vitest at main fails %q, want only %s", got, tsAtThreshold)
	}
	if got := vitestFailures(t, repo, branch); len(got) != 0 {
		t.Errorf("vitest at %s fails %q", branch, got)
	}
}
