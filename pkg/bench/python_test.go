package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/sandbox"
)

// pyHistory is a tiny Python package's history, oldest first, in
// buildHistory's form: a fix that qualifies, and one commit for each
// reason a Python commit is skipped.
var pyHistory = []string{
	`start
-- pyproject.toml --
[project]
name = "calc"
version = "0.1.0"
-- calc/__init__.py --
-- calc/ops.py --
def add(a, b):
    """a plus b."""
    return a - b


def mul(a, b):
    """a times b."""
    return a * b
-- tests/__init__.py --
-- tests/test_mul.py --
from calc.ops import mul


def test_mul():
    assert mul(2, 3) == 6
`,
	`Fix add: it subtracted
-- calc/ops.py --
def add(a, b):
    """a plus b."""
    return a + b


def mul(a, b):
    """a times b."""
    return a * b
-- tests/test_add.py --
import pytest

from calc.ops import add


@pytest.mark.parametrize("a,b,want", [(2, 3, 5), (0, 0, 0)])
def test_add(a, b, want):
    assert add(a, b) == want, f"add({a}, {b}) = {add(a, b)}, want {want}"


class TestAdd:
    def test_commutes(self):
        assert add(1, 2) == add(2, 1)


def test_unrelated_broken():
    assert False, "broken before the fix and after it"
`,
	`Document mul (code only)
-- calc/ops.py --
def add(a, b):
    """a plus b."""
    return a + b


def mul(a, b):
    """a times b, for any numbers."""
    return a * b
`,
	`More tests (tests only)
-- tests/test_more.py --
from calc.ops import add


def test_add_zero():
    assert add(0, 0) == 0
`,
	`Half (code only)
-- calc/half.py --
def half(n):
    """n halved, rounded up."""
    return n // 2
`,
	`Fix half's rounding (its test fails only every other run without the fix)
-- calc/half.py --
def half(n):
    """n halved, rounded up."""
    return (n + 1) // 2
-- tests/test_half.py --
import os

from calc.half import half

RUNS = os.path.join(os.path.dirname(__file__), "half.runs")


def test_half():
    # Checks only on odd runs, counted in a file that outlives the
    # process: a stand-in for a test that depends on timing.
    try:
        with open(RUNS) as f:
            n = int(f.read())
    except FileNotFoundError:
        n = 0
    n += 1
    with open(RUNS, "w") as f:
        f.write(str(n))
    if n % 2 == 1:
        assert half(3) == 2
`,
	`Neg (its test needs the new function)
-- calc/ops.py --
def add(a, b):
    """a plus b."""
    return a + b


def mul(a, b):
    """a times b, for any numbers."""
    return a * b


def neg(a):
    """minus a."""
    return -a
-- tests/test_neg.py --
from calc.ops import neg


def test_neg():
    assert neg(2) == -2
`,
	`A comment, and a test that passed before too
-- calc/ops.py --
def add(a, b):
    """a plus b; add(a, 0) is a."""
    return a + b


def mul(a, b):
    """a times b, for any numbers."""
    return a * b


def neg(a):
    """minus a."""
    return -a
-- tests/test_mul.py --
from calc.ops import mul


def test_mul():
    assert mul(2, 3) == 6


def test_mul_zero():
    assert mul(0, 5) == 0
`,
	`Mul of floats (its test fails with the fix too)
-- calc/ops.py --
def add(a, b):
    """a plus b; add(a, 0) is a."""
    return a + b


def mul(a, b):
    """a times b, for any numbers."""
    return float(a) * float(b)


def neg(a):
    """minus a."""
    return -a
-- tests/test_float.py --
from calc.ops import mul


def test_mul_float():
    assert mul(0.1, 3) == 0.3
`,
	`Fetch: a test that connects
-- calc/fetch.py --
PORT = 1
-- tests/test_fetch.py --
import socket

from calc.fetch import PORT


def test_fetch():
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
`,
	`Mul by a loop, its test file broken (does not collect)
-- calc/ops.py --
def add(a, b):
    """a plus b; add(a, 0) is a."""
    return a + b


def mul(a, b):
    """a times b, for any numbers, once by a loop."""
    return float(a) * float(b)


def neg(a):
    """minus a."""
    return -a
-- tests/test_loop.py --
from calc.ops import mul


def test_loop(:
    assert mul(2, 2) == 4
`,
	`Depend on a package the index does not have
-- pyproject.toml --
[project]
name = "calc"
version = "0.1.0"
dependencies = ["redfix-no-such-package"]
-- calc/dep.py --
NAME = "dep"
-- tests/test_dep.py --
from calc.dep import NAME


def test_dep():
    assert NAME == "dep"
`,
	`Readme only
-- README.md --
calc: small arithmetic.
`,
	`Drop the dependency (the old code's setup fails)
-- pyproject.toml --
[project]
name = "calc"
version = "0.1.0"
-- calc/dep.py --
NAME = "dep, without a dependency"
-- tests/test_dep.py --
from calc.dep import NAME


def test_dep():
    assert NAME.startswith("dep")
`,
}

// pythonLanguages are the drivers the wiring builds, Go's and Python's, on
// a host with Debian's python3 and pytest; without them the test is
// skipped (failed under CI=true, whose .ci/run installs them). The Python
// driver installs from an empty local index, which serves nothing.
func pythonLanguages(t *testing.T) *lang.Drivers {
	t.Helper()
	pythontest.Require(t)
	index := t.TempDir()
	return lang.New(
		golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}},
		python.Driver{Timeout: 5 * time.Minute, SetupTimeout: 5 * time.Minute, IndexURL: "file://" + index},
	)
}

// confinedCtx is testCtx with a sandbox that must confine (a host that
// cannot skips the test, or fails it under CI=true), its cache the test's.
func confinedCtx(t *testing.T) context.Context {
	t.Helper()
	ctx := testCtx(t)
	box, err := sandbox.New(ctx, sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	return sandbox.With(ctx, box)
}

// A Python history mined (every commit a verdict: one qualified fix, one
// skip for each reason a Python commit is skipped), then its task benched:
// one mine, which is what costs (a set-up and pytest runs per commit), for
// both.
func TestPythonHistoryMinedAndBenched(t *testing.T) {
	t.Parallel()
	langs := pythonLanguages(t)
	ctx := confinedCtx(t)
	dir, shas := buildHistory(t, ctx, pyHistory)
	ctx = sandbox.WithRepo(ctx, dir)
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	var progress bytes.Buffer
	o := MineOptions{Repo: dir, Out: out, MaxLines: 12, FlakeError: steadyError, Languages: langs, Progress: NewProgress(&progress, "commits")}
	sum, err := Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())
	t.Run("mined", func(t *testing.T) { checkMinedPython(t, shas, out, sum) })
	t.Run("benched", func(t *testing.T) { checkBenchedPython(ctx, t, langs, shas, out) })
}

// checkMinedPython checks the verdicts, the task and the summary of
// pyHistory's mine into out.
func checkMinedPython(t *testing.T, shas []string, out string, sum MineSummary) {

	want := []string{SkipRoot, "qualified", SkipCodeOnly, SkipTestOnly, SkipCodeOnly, SkipFlaky, SkipTestsBuild,
		SkipPassOld, SkipFailFix, SkipNetwork, SkipBuild, SkipSetup, "no-python-change", SkipSetup}
	verdicts := map[string]Verdict{}
	if err := readLines(StatePath(out), func(b []byte) error {
		var v Verdict
		err := json.Unmarshal(b, &v)
		verdicts[v.Commit] = v
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		v, ok := verdicts[shas[i]]
		if !ok {
			t.Errorf("commit %d (%s) has no verdict", i, strings.SplitN(pyHistory[i], "\n", 2)[0])
			continue
		}
		got := v.Skip
		if v.Qualified {
			got = "qualified"
		}
		if got != w {
			t.Errorf("commit %d %q: %s (%s), want %s", i, v.Subject, got, v.Reason, w)
		}
	}
	if v := verdicts[shas[5]]; !strings.Contains(v.Reason, "without the fix tests/test_half.py::test_half failed 2 of 3 runs") {
		t.Errorf("flaky reason: %q", v.Reason)
	}
	// A setup that fails names its command and what the index said.
	if v := verdicts[shas[11]]; !strings.Contains(v.Reason, "pip") || !strings.Contains(v.Reason, "redfix-no-such-package") {
		t.Errorf("setup reason: %q", v.Reason)
	}
	if v := verdicts[shas[12]]; v.Reason != "no-python-change: no Python file changed" {
		t.Errorf("readme reason: %q", v.Reason)
	}
	if v := verdicts[shas[10]]; !strings.HasPrefix(v.Reason, "does-not-build: tests/test_loop.py: ") || !strings.Contains(v.Reason, "SyntaxError") {
		t.Errorf("a test file that does not collect: %q", v.Reason)
	}
	if v := verdicts[shas[13]]; !strings.HasPrefix(v.Reason, "setup-failed: without the fix: ") || !strings.Contains(v.Reason, "redfix-no-such-package") {
		t.Errorf("the old code's setup: %q", v.Reason)
	}

	tasks, err := ReadTasksFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("tasks: %+v", tasks)
	}
	tk := tasks[0]
	if tk.Fix != shas[1] || tk.Base != shas[0] || tk.Subject != "Fix add: it subtracted" {
		t.Errorf("task commits: %+v", tk)
	}
	// Tests by node id, each parameter its own: add(0, 0) was right before
	// the fix, so its case is not the task's; the broken test is known to
	// fail with the fix.
	if got := strings.Join(tk.Tests, ","); got != "tests/test_add.py::TestAdd::test_commutes,tests/test_add.py::test_add[2-3-5]" {
		t.Errorf("task tests %s", got)
	}
	if strings.Join(tk.Packages, ",") != "tests/test_add.py" || strings.Join(tk.KnownFailures, ",") != "tests/test_add.py::test_unrelated_broken" {
		t.Errorf("task packages %v, known failures %v", tk.Packages, tk.KnownFailures)
	}
	if !strings.Contains(tk.TestPatch, "+++ b/tests/test_add.py") || strings.Contains(tk.TestPatch, "ops.py") {
		t.Errorf("test patch:\n%s", tk.TestPatch)
	}
	if !strings.Contains(tk.Golden, "+    return a + b") || strings.Contains(tk.Golden, "test_add") || tk.LinesChanged != 2 {
		t.Errorf("golden patch (%d lines):\n%s", tk.LinesChanged, tk.Golden)
	}
	if sum.Commits != len(pyHistory) || sum.Qualified != 1 || sum.Examined != 9 {
		t.Errorf("summary: %+v", sum)
	}
}

const fixedOps = `def add(a, b):
    """a plus b."""
    return a + b


def mul(a, b):
    """a times b."""
    return a * b
`

// checkBenchedPython benches the Python task mined into out: the agent is
// told pytest's failures, and each patch is scored on a clean copy with
// pytest, Python's test files guarded.
func checkBenchedPython(ctx context.Context, t *testing.T, langs *lang.Drivers, shas []string, out string) {
	tasks, err := ReadTasksFile(out)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("mined: %v %v", tasks, err)
	}

	rep := &scripted{steps: []scriptedStep{
		// The person's fix: solved, the golden change.
		{files: map[string]string{"calc/ops.py": fixedOps}, published: true},
		// The test file edited to pass: not solved.
		{files: map[string]string{"tests/test_add.py": "def test_add():\n    pass\n"}, published: true},
		// The failing tests' literals special-cased: they pass, another
		// case of the same file fails.
		{files: map[string]string{"calc/ops.py": strings.Replace(fixedOps, "return a + b", "return 5 if (a, b) == (2, 3) else (3 if (a, b) == (1, 2) or (a, b) == (2, 1) else 1)", 1)}},
	}}
	results := filepath.Join(t.TempDir(), "results.jsonl")
	r := &Runner{Repairer: rep, Policy: "scripted", Languages: langs, K: 3, Results: results}
	res, err := r.Run(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Error != "" || len(res[0].Samples) != 3 {
		t.Fatalf("results: %+v", res)
	}
	s := res[0].Samples
	if !s[0].Solved || s[0].Golden != "same" {
		t.Errorf("episode 1: %+v", s[0])
	}
	if s[1].Solved || !strings.Contains(s[1].Score, "changes a test file: tests/test_add.py") {
		t.Errorf("episode 2: %+v", s[1])
	}
	// The known failure (test_unrelated_broken) is not held against it.
	if s[2].Solved || !strings.Contains(s[2].Score, "1 other tests of the packages fail: tests/test_add.py::test_add[0-0-0]") {
		t.Errorf("episode 3: %+v", s[2])
	}
	seen := rep.seen[0]
	var told []string
	for _, f := range seen.Failures {
		told = append(told, f.ID()+": "+f.Message)
	}
	if len(seen.Failures) != 2 || !strings.Contains(strings.Join(told, "\n"), "add(2, 3) = -1, want 5") {
		t.Errorf("the agent is told:\n%s", strings.Join(told, "\n"))
	}
	if strings.Contains(rep.logs, shas[1]) {
		t.Errorf("the task's history holds the fix:\n%s", rep.logs)
	}
}
