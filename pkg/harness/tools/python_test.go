package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// A Python repository whose volume discount its second commit broke: an
// order of exactly a tier's minimum no longer gets the tier (> for >=).
var pyGood = map[string]string{
	"pyproject.toml":    "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
	"shop/__init__.py":  "",
	"tests/__init__.py": "",
	"shop/pricing.py": `"""Quote orders from a catalog of unit prices."""

from dataclasses import dataclass


@dataclass
class Tier:
    min_qty: int
    percent_off: int


class Catalog:
    def __init__(self):
        self.prices = {}
        self.tiers = []

    def set_price(self, sku, cents):
        self.prices[sku] = cents

    def add_tier(self, tier):
        self.tiers.append(tier)
        self.tiers.sort(key=lambda t: t.min_qty, reverse=True)

    def discount(self, qty):
        for t in self.tiers:
            if qty >= t.min_qty:
                return t.percent_off
        return 0

    def quote(self, sku, qty):
        total = self.prices[sku] * qty
        return total - total * self.discount(qty) // 100
`,
	"tests/test_discount.py": `import pytest

from shop.pricing import Catalog, Tier


@pytest.fixture
def catalog():
    c = Catalog()
    c.set_price("widget", 1000)
    c.add_tier(Tier(min_qty=10, percent_off=5))
    return c


@pytest.mark.parametrize("qty, want", [(9, 9000), (10, 9500), (20, 19000)], ids=["below", "at_threshold", "above"])
def test_volume_discount(catalog, qty, want):
    assert catalog.quote("widget", qty) == want


def test_no_tiers():
    assert Catalog().discount(100) == 0
`,
}

// newPyFixture is a workspace at the commit that broke the discount, and
// the task triage would make of it.
func newPyFixture(t *testing.T) harnesstest.Fixture {
	t.Helper()
	pythontest.Require(t)
	ctx := context.Background()
	src := t.TempDir()
	repo, err := gitrepo.Init(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	harnesstest.WriteFiles(t, src, pyGood)
	good, err := repo.CommitAll(ctx, "pricing: volume discounts")
	if err != nil {
		t.Fatal(err)
	}
	harnesstest.WriteFiles(t, src, map[string]string{"shop/pricing.py": harnesstest.ReplaceOnce(t, pyGood["shop/pricing.py"], "qty >= t.min_qty", "qty > t.min_qty")})
	bad, err := repo.CommitAll(ctx, "pricing: stop at the first tier that applies")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ctx, src, bad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return harnesstest.Fixture{WS: ws, Good: good, Bad: bad, Task: task.Task{
		ID: "task-py", Repo: src, Commit: bad,
		Failures: []task.Failure{{
			Package: "tests/test_discount.py", Test: "test_volume_discount[at_threshold]",
			Message: "assert 10000 == 9500",
			Frames:  []string{"tests/test_discount.py:16"},
		}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: good, Bad: bad, Blame: bad, Subject: "pricing: stop at the first tier that applies", Steps: 1},
	}}
}

func newPySession(t *testing.T, f harnesstest.Fixture) *Session {
	t.Helper()
	env := testEnv(t)
	env.Lang = python.Driver{}
	s := NewSession(env, f.WS, f.Task, All())
	t.Cleanup(s.Close)
	return s
}

// The tools on a Python repository, through the driver: pytest's node ids,
// test files and directories as packages, coverage, symbols, pyflakes.
func TestToolsPython(t *testing.T) {
	f := newPyFixture(t)
	s := newPySession(t, f)

	obs := do(t, s, RunTests, RunTestsArgs{})
	wantContent(t, obs, false, "FAIL: 0 passed, 1 failed (the task's failing tests)",
		"--- FAIL: tests/test_discount.py::test_volume_discount[at_threshold]", "assert 10000 == 9500")
	if s.oraclePassed {
		t.Error("a failing oracle run counts as passed")
	}
	// A test file is a package: all its tests run.
	obs = do(t, s, RunTests, RunTestsArgs{Tests: []string{"tests/test_discount.py"}})
	wantContent(t, obs, false, "FAIL: 3 passed, 1 failed (these include the task's failing tests)",
		"Passed: ", "tests/test_discount.py::test_no_tiers")
	// So is a directory; a bare name is a test.
	wantContent(t, do(t, s, RunTests, RunTestsArgs{Tests: []string{"tests"}}), false, "FAIL: 3 passed, 1 failed")
	wantContent(t, do(t, s, RunTests, RunTestsArgs{Tests: []string{"test_no_tiers"}}), false, "PASS: 1 passed, 0 failed")

	obs = do(t, s, RunTests, RunTestsArgs{List: true})
	wantContent(t, obs, false, "test_discount.py", "test_volume_discount[at_threshold]", "test_no_tiers")

	obs = do(t, s, RunTests, RunTestsArgs{Localize: true})
	wantContent(t, obs, false, "shop/pricing.py:")
	if obs.Tests == nil || len(obs.Tests.Suspects) == 0 || obs.Tests.Suspects[0].File != "shop/pricing.py" {
		t.Fatalf("suspects = %+v", obs.Tests)
	}

	// Symbols come from tree-sitter's index of the Python files.
	obs = do(t, s, SearchMethod, SearchMethodArgs{Name: "discount"})
	wantContent(t, obs, false, "shop/pricing.py", "def discount(self, qty)")
	wantContent(t, do(t, s, SearchClass, SearchClassArgs{Name: "Catalog"}), false, "shop/pricing.py")

	// An edit's feedback is pyflakes' and the compiler's, its own only.
	obs = do(t, s, Edit, EditArgs{Path: "shop/pricing.py", Blocks: "<<<<<<< SEARCH\n        for t in self.tiers:\n=======\n        unused = 1\n        for t in self.tiers:\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, false, "local variable 'unused' is assigned to but never used")
	obs = do(t, s, Edit, EditArgs{Path: "shop/pricing.py", Blocks: "<<<<<<< SEARCH\n        unused = 1\n        for t in self.tiers:\n            if qty > t.min_qty:\n=======\n        for t in self.tiers:\n            if qty >= t.min_qty:\n>>>>>>> REPLACE\n"})
	if obs.IsError || obs.Edit == nil || !obs.Edit.Applied || len(obs.Edit.Diagnostics) > 0 || strings.Contains(obs.Content, "never used") {
		t.Fatalf("the fix's edit: %+v", obs)
	}
	wantContent(t, do(t, s, RunTests, RunTestsArgs{}), false, "PASS: 1 passed, 0 failed (the task's failing tests)")
	if !s.oraclePassed {
		t.Error("the oracle passed and the session does not know it")
	}
}

// run_tests tells packages from tests as each driver resolves them in the
// checkout: Go's packages also by their patterns; a Python file or
// directory of tests is a package, a node id or a bare name a test, and a
// Go pattern is nothing of Python's.
func TestIsPackage(t *testing.T) {
	goSession := newTestSession(t, harnesstest.Calc(t), nil)
	for a, want := range map[string]bool{
		"./...": true, "./calc": true, ".": true, "example.com/calc": true, "example.com/calc/calc": true,
		"TestAdd": false, "TestAdd/sub": false, "example.com/calc/calc.TestAdd": false, "TestNope": false,
	} {
		if got := goSession.isPackage(a); got != want {
			t.Errorf("Go: isPackage(%q) = %v, want %v", a, got, want)
		}
	}
	py := newPySession(t, newPyFixture(t))
	for a, want := range map[string]bool{
		"tests/test_discount.py": true, "tests": true, "./...": false,
		"tests/test_discount.py::test_volume_discount": false, "tests/test_discount.py::test_volume_discount[at_threshold]": false,
		"test_volume_discount": false, "tests.test_discount.test_volume_discount": false, "test_nope": false,
	} {
		if got := py.isPackage(a); got != want {
			t.Errorf("Python: isPackage(%q) = %v, want %v", a, got, want)
		}
	}
}

// The policy is told how a Python repository's tests are named, doctests
// included, and what an edit returns (compile() and pyflakes, not Go's
// build, vet and gofmt): nothing of Go's is said to it.
func TestSpecsForPython(t *testing.T) {
	for _, sp := range Specs(All(), python.Driver{}) {
		d := sp.Description
		switch sp.Name {
		case RunTests:
			if !strings.Contains(d, "tests/test_x.py::TestC::test_y[param]") || !strings.Contains(d, "src/pkg/mod.py::pkg.mod.func") {
				t.Errorf("Python's run_tests: %q", d)
			}
		case Edit:
			if !strings.Contains(d, "compile() and pyflakes") {
				t.Errorf("Python's edit: %q", d)
			}
		}
		for _, goWord := range []string{"gofmt", "vet", "import path", "Go "} {
			if strings.Contains(d, goWord) {
				t.Errorf("Python's %s speaks of Go: %q", sp.Name, d)
			}
		}
	}
}

// A run after an edit that makes a test loop forever is stopped at its
// bound (ten times the first run of the failing tests, at least the floor)
// and said so, instead of taking the driver's whole timeout.
func TestRunStoppedAtItsBound(t *testing.T) {
	f := newPyFixture(t)
	env := testEnv(t)
	env.Lang, env.TestRunFloor = python.Driver{}, 3*time.Second
	s := NewSession(env, f.WS, f.Task, All())
	t.Cleanup(s.Close)
	wantContent(t, do(t, s, RunTests, RunTestsArgs{}), false, "FAIL: 0 passed, 1 failed (the task's failing tests)")
	if s.firstRun <= 0 {
		t.Fatal("the first run of the failing tests was not timed")
	}
	obs := do(t, s, Edit, EditArgs{Path: "shop/pricing.py", Blocks: "<<<<<<< SEARCH\n        for t in self.tiers:\n=======\n        while qty:\n            pass\n        for t in self.tiers:\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !obs.Edit.Applied {
		t.Fatalf("the looping edit: %+v", obs)
	}
	obs = do(t, s, RunTests, RunTestsArgs{})
	wantContent(t, obs, true, "STOPPED: the tests did not finish within", "loop or wait forever")
	if obs.Tests == nil || obs.Tests.OK || !obs.Tests.Stopped {
		t.Fatalf("the stopped run's result: %+v", obs.Tests)
	}
}
