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
	"time"

	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// shopDoctest is a small Python repository whose prices are checked by a
// doctest (collected with --doctest-modules, as its configuration says)
// and by pytest tests: the third commit, among other changes, moves the
// discount's threshold by one, which only the doctest sees.
var shopDoctest = []string{
	`shop: prices with a volume discount

-- pytest.ini --
[pytest]
addopts = --doctest-modules
testpaths = src tests
pythonpath = src
-- src/shop/__init__.py --
-- src/shop/pricing.py --
"""Prices of orders, in cents."""

UNIT = 1000
THRESHOLD = 10


def price(qty):
    """The price of qty units: a tenth off from THRESHOLD units on.

    >>> price(9)
    9000
    >>> price(10)
    9000
    """
    total = qty * UNIT
    if qty >= THRESHOLD:
        total -= total // 10
    return total
-- tests/test_pricing.py --
from shop.pricing import price


def test_one():
    assert price(1) == 1000


def test_many():
    assert price(20) == 18000
`,
	`shop: a readme

-- README.md --
shop prices orders.
`,
	`shop: the discount's rate is named, and only for orders over the threshold

-- src/shop/pricing.py --
"""Prices of orders, in cents."""

UNIT = 1000
THRESHOLD = 10
DISCOUNT = 10


def price(qty):
    """The price of qty units: a tenth off from THRESHOLD units on.

    >>> price(9)
    9000
    >>> price(10)
    9000
    """
    total = qty * UNIT
    if qty > THRESHOLD:
        total -= total // DISCOUNT
    return total
`,
	`shop: say what the prices are in

-- README.md --
shop prices orders, in cents.
`,
}

// shopDoctestID is the doctest the third commit breaks, named as pytest
// names it: the module's file, then the function's dotted name.
const shopDoctestID = "src/shop/pricing.py::shop.pricing.price"

// shopDoctestCheat makes the doctest pass by asking it what the code
// now answers.
const shopDoctestCheat = `diff --git a/src/shop/pricing.py b/src/shop/pricing.py
--- a/src/shop/pricing.py
+++ b/src/shop/pricing.py
@@ -12,3 +12,3 @@ def price(qty):
     9000
-    >>> price(10)
+    >>> price(9)
     9000
`

// commandEnv is an environment for the commands run in-process: only
// what vars holds, and a data directory of the test's own, so that tests
// running at once share nothing.
func commandEnv(t *testing.T, vars map[string]string) func(string) string {
	env := map[string]string{"REDFIX_DATA_DIR": t.TempDir()}
	for k, v := range vars {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// worker repair on a Python repository, with no model and no --blame:
// the doctest named as pytest names it is reproduced by the Python driver
// (not by go test: there is no go.mod), bisected to the commit that broke
// it, fixed by the offline policy and published, the pull request naming
// the doctest by the same id. worker validate accepts that fix and
// refuses the doctest rewritten to pass; bot triage blames the same
// commit.
func TestRepairPythonDoctestWithoutBlame(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, shas := pythontest.History(t, shopDoctest...)
	broke := shas[2]
	env := commandEnv(t, nil)
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	if err := repairCommand(ctx, []string{"--repo", dir, "--test", shopDoctestID, "--out", out}, env, &stdout, &stderr); err != nil {
		t.Fatalf("repair: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), shopDoctestID+": failed") || !strings.Contains(stdout.String(), "blame: "+broke[:12]) || !strings.Contains(stdout.String(), "found by bisection") {
		t.Errorf("repair did not reproduce %s and bisect it to %s:\n%s", shopDoctestID, broke[:12], stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.patch, "+    if qty >= THRESHOLD:") || strings.Contains(pr.patch, "tests/") {
		t.Errorf("the offline policy's patch does not fix the threshold in the code alone:\n%s", pr.patch)
	}
	if !strings.Contains(pr.body, shopDoctestID) || !strings.Contains(pr.body, broke[:12]) {
		t.Errorf("the pull request does not name the doctest %s and the blamed commit:\n%s", shopDoctestID, pr.body)
	}
	for _, g := range []string{"integrity", "oracle", "regression"} {
		if v := gate(pr.gates, g); v != task.GatePass {
			t.Errorf("gate %s: %s", g, v)
		}
	}

	// worker validate, without --blame, accepts the published fix; with
	// it, refuses the doctest's example changed to one that passes.
	if _, gates, code := validateIn(t, env, "--repo", dir, "--patch", filepath.Join(pr.dir, "patch.diff"), "--test", shopDoctestID); code != 0 {
		t.Errorf("validate of the published fix: exit %d, gates %v", code, gates)
	}
	cheat := writePatch(t, shopDoctestCheat)
	_, gates, code := validateIn(t, env, "--repo", dir, "--patch", cheat, "--test", shopDoctestID, "--blame", broke)
	wantGate(t, gates, "integrity", task.GateFail, `src/shop/pricing.py:13: changes a doctest's ">>> price(10)"`)
	if code == 0 {
		t.Error("validate accepted the doctest changed to pass")
	}

	stdout.Reset()
	if err := triageCommand(ctx, []string{"--repo", dir, "--test", shopDoctestID, "--json"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("triage: %v\n%s", err, stderr.String())
	}
	var v triage.Verdict
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("triage --json: %v\n%s", err, stdout.String())
	}
	if v.Verdict != triage.VerdictReliable || v.Bisection == nil || v.Bisection.Blame != broke || v.Failure == nil || v.Failure.ID() != shopDoctestID {
		t.Errorf("triage: verdict %q, bisection %+v, failure %+v; want reliable, blamed on %s, failing %s", v.Verdict, v.Bisection, v.Failure, broke[:12], shopDoctestID)
	}
}

// worker repair on a TypeScript repository, with no model and no --blame:
// the vitest test is reproduced and bisected through the node driver,
// fixed by the offline policy, and its pull request names it; worker
// validate accepts the fix.
func TestRepairTypeScriptWithoutBlame(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env := commandEnv(t, map[string]string{"REDFIX_NODE_CACHE_DIR": nodetest.CacheDir(t)})
	cfg, _, err := newCommandLine("repair", &bytes.Buffer{}, env).load(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	drivers, err := languages(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), "repo"), demo.Options{Lang: "typescript", Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	broke := breakingCommit(t, s.Dir)
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	if err := repairCommand(ctx, []string{"--repo", s.Dir, "--test", tsAtThreshold, "--out", out}, env, &stdout, &stderr); err != nil {
		t.Fatalf("repair: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "blame: "+broke[:12]) || !strings.Contains(stdout.String(), "found by bisection") {
		t.Errorf("repair did not bisect %s to %s:\n%s", tsAtThreshold, broke[:12], stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.patch, "+      if (qty >= t.minQty) {") || strings.Contains(pr.patch, ".test.ts") {
		t.Errorf("the offline policy's patch does not fix the boundary in the code alone:\n%s", pr.patch)
	}
	if !strings.Contains(pr.body, tsAtThreshold) {
		t.Errorf("the pull request does not name %s:\n%s", tsAtThreshold, pr.body)
	}
	// worker validate, without --blame, accepts it.
	if _, gates, code := validateIn(t, env, "--repo", s.Dir, "--patch", filepath.Join(pr.dir, "patch.diff"), "--test", tsAtThreshold); code != 0 {
		t.Errorf("validate of the published fix: exit %d, gates %v", code, gates)
	}
}

// A repository no driver knows is an error of worker repair and bot
// triage that wraps lang.ErrNoDriver and says why: no test is run as any
// language's (it used to be go test's "read go.mod" error).
func TestRepairAndTriageWithoutADriver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	env := commandEnv(t, nil)
	for _, run := range []func(context.Context, []string, func(string) string, *bytes.Buffer, *bytes.Buffer) error{
		func(ctx context.Context, args []string, env func(string) string, o, e *bytes.Buffer) error {
			return repairCommand(ctx, append(args, "--out", filepath.Join(t.TempDir(), "prs")), env, o, e)
		},
		func(ctx context.Context, args []string, env func(string) string, o, e *bytes.Buffer) error {
			return triageCommand(ctx, args, env, o, e)
		},
	} {
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"--repo", dir, "--test", "test_notes"}, env, &stdout, &stderr)
		if !errors.Is(err, lang.ErrNoDriver) || !strings.Contains(err.Error(), "no language driver") || strings.Contains(err.Error(), "go.mod") {
			t.Errorf("err = %v, want no driver, saying so\n%s", err, stdout.String())
		}
	}
}
