package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
)

// calcRepo is a small project with a bug in add, and tests of every kind:
// passing, failing on an assertion, erroring in the code under test,
// parametrized with one failing case, in a class, skipped, expected to
// fail.
var calcRepo = map[string]string{
	"pyproject.toml": "[project]\nname = \"calc\"\nversion = \"0.1\"\n",
	"calc/__init__.py": `def add(a, b):
    return a - b


def div(a, b):
    return a / b


def double(x):
    return x * 2
`,
	"tests/test_calc.py": `import pytest

from calc import add, div, double


def test_add():
    assert add(2, 3) == 5


def test_div():
    assert div(4, 2) == 2


def test_div_by_zero():
    div(1, 0)


@pytest.mark.parametrize("x", [1, 2.5, "a b"])
def test_double(x):
    assert x != 2.5, "two and a half"
    assert double(x) == x + x


class TestCalc:
    def test_double_int(self):
        assert double(3) == 6

    def test_add_zero(self):
        assert add(0, 0) == 0

    def test_skipped(self):
        pytest.skip("not today")

    @pytest.mark.xfail(reason="known")
    def test_xfail(self):
        assert False
`,
}

func TestRunReportsEachKindOfTest(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, calcRepo)
	o := mustRun(t, ctx, d, dir, 1,
		"tests/test_calc.py::test_add", "tests/test_calc.py::test_div", "tests/test_calc.py::test_div_by_zero",
		"tests/test_calc.py::test_double", "tests/test_calc.py::TestCalc", "tests/test_calc.py::TestCalc::test_skipped")

	wantFailed := []string{"tests/test_calc.py::test_add", "tests/test_calc.py::test_div_by_zero", "tests/test_calc.py::test_double[2.5]"}
	if got := sorted(ids(o.Failed)); !slices.Equal(got, wantFailed) {
		t.Errorf("Failed = %q, want %q", got, wantFailed)
	}
	for _, id := range []string{"tests/test_calc.py::test_div", "tests/test_calc.py::test_double[1]", "tests/test_calc.py::test_double[a b]",
		"tests/test_calc.py::TestCalc::test_double_int", "tests/test_calc.py::TestCalc::test_add_zero", "tests/test_calc.py::TestCalc"} {
		if !slices.Contains(o.Passed, id) {
			t.Errorf("%s is not in Passed %q", id, o.Passed)
		}
	}
	if len(o.Missing) != 0 || len(o.Build) != 0 || len(o.Others) != 0 || o.TimedOut {
		t.Errorf("Missing %q, Build %+v, Others %+v, TimedOut %v", o.Missing, o.Build, o.Others, o.TimedOut)
	}

	// The failing assertion's message and where it failed.
	add, _ := failureOf(o.Failed, "tests/test_calc.py::test_add")
	if add.Package != "tests/test_calc.py" || add.Test != "test_add" || add.Message != "assert -1 == 5" ||
		!slices.Equal(add.Frames, []string{"tests/test_calc.py:7"}) || !strings.Contains(add.Output, "assert add(2, 3) == 5") {
		t.Errorf("test_add's failure = %+v", add)
	}
	// An error raised in the code under test: its line first, then the
	// test's.
	dz, _ := failureOf(o.Failed, "tests/test_calc.py::test_div_by_zero")
	if dz.Message != "ZeroDivisionError: division by zero" || !slices.Equal(dz.Frames, []string{"calc/__init__.py:6", "tests/test_calc.py:15"}) {
		t.Errorf("test_div_by_zero's failure = %+v", dz)
	}
	p, _ := failureOf(o.Failed, "tests/test_calc.py::test_double[2.5]")
	if p.Test != "test_double[2.5]" || p.Message != "AssertionError: two and a half" {
		t.Errorf("the parametrized failure = %+v", p)
	}
	if strings.Contains(add.Output+dz.Output, dir) {
		t.Errorf("a failure's output names the checkout's path: %s", add.Output+dz.Output)
	}

	// A parametrized function asked for whole failed when one case did;
	// a class passed when all of its tests that ran passed.
	if r := o.Runs["tests/test_calc.py::test_double"]; r != (report.Runs{Fail: 1}) {
		t.Errorf("Runs[test_double] = %+v", r)
	}
	if r := o.Runs["tests/test_calc.py::test_double[1]"]; r != (report.Runs{Pass: 1}) {
		t.Errorf("Runs[test_double[1]] = %+v", r)
	}
	if r := o.Runs["tests/test_calc.py::TestCalc"]; r != (report.Runs{Pass: 1}) {
		t.Errorf("Runs[TestCalc] = %+v", r)
	}
	// A skipped test ran: it is neither passed, failed nor missing.
	if r := o.Runs["tests/test_calc.py::TestCalc::test_skipped"]; r != (report.Runs{Skip: 1}) {
		t.Errorf("Runs[test_skipped] = %+v", r)
	}
	if o.Invocations != 1 || o.Duration <= 0 || !strings.Contains(o.Output, "3 failed") {
		t.Errorf("Invocations %d, Duration %v, Output %q", o.Invocations, o.Duration, o.Output)
	}
	if o.OK() {
		t.Error("an outcome with failures is OK")
	}
}

// A file that does not collect is a build failure, named by the file, and
// stops no other file's tests.
func TestRunSyntaxErrorIsABuildFailure(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, calcRepo)
	writeTree(t, dir, map[string]string{
		"tests/test_broken.py": "def test_x(:\n    pass\n",
		"tests/test_import.py": "import not_a_module\n\n\ndef test_y():\n    pass\n",
	})
	o := mustRun(t, ctx, d, dir, 1, "tests/test_broken.py::test_x", "tests/test_import.py", "tests/test_calc.py::test_div")
	if !slices.Equal(o.Passed, []string{"tests/test_calc.py::test_div"}) {
		t.Errorf("Passed = %q", o.Passed)
	}
	if len(o.Build) != 2 {
		t.Fatalf("Build = %+v", o.Build)
	}
	b, _ := failureOf(o.Build, "tests/test_broken.py")
	if b.Test != "" || b.Message != "SyntaxError: invalid syntax" || !slices.Equal(b.Frames, []string{"tests/test_broken.py:1"}) {
		t.Errorf("the syntax error = %+v", b)
	}
	imp, _ := failureOf(o.Build, "tests/test_import.py")
	if imp.Message != "ModuleNotFoundError: No module named 'not_a_module'" || !slices.Equal(imp.Frames, []string{"tests/test_import.py:1"}) {
		t.Errorf("the failing import = %+v", imp)
	}
	// The file asked for whole failed; the test in a file that does not
	// build is not missing: the build failure says why it did not run.
	if r := o.Runs["tests/test_import.py"]; r.Fail != 1 {
		t.Errorf("Runs[tests/test_import.py] = %+v", r)
	}
	if len(o.Missing) != 0 || len(o.Failed) != 0 {
		t.Errorf("Missing %q, Failed %+v", o.Missing, o.Failed)
	}
}

// pytest has no -count: count runs are count processes, added up.
func TestRunCountMergesRuns(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, map[string]string{
		"conftest.py": "",
		// Fails on its second run only: the runs share the checkout.
		"test_flaky.py": `import pathlib


def test_flaky():
    p = pathlib.Path(__file__).with_name("runs.txt")
    n = int(p.read_text()) if p.exists() else 0
    p.write_text(str(n + 1))
    assert n != 1, "second run"


def test_steady():
    pass
`,
	})
	o := mustRun(t, ctx, d, dir, 3, "test_flaky.py::test_flaky", "test_steady")
	if o.Invocations != 3 {
		t.Errorf("Invocations = %d", o.Invocations)
	}
	if r := o.Runs["test_flaky.py::test_flaky"]; r != (report.Runs{Pass: 2, Fail: 1}) {
		t.Errorf("Runs[test_flaky] = %+v; runs %+v\n%s", r, o.Runs, o.Output)
	}
	if r := o.Runs["test_flaky.py::test_steady"]; r != (report.Runs{Pass: 3}) {
		t.Errorf("Runs[test_steady] = %+v", r)
	}
	if !slices.Equal(ids(o.Failed), []string{"test_flaky.py::test_flaky"}) || o.Failed[0].Message != "AssertionError: second run" {
		t.Errorf("Failed = %+v", o.Failed)
	}
	if !slices.Equal(o.Passed, []string{"test_flaky.py::test_steady"}) {
		t.Errorf("Passed = %q", o.Passed)
	}
}

// Names that are not tests do not stop the others: each is missing, with
// the reason.
func TestRunUnknownNames(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, calcRepo)
	o := mustRun(t, ctx, d, dir, 1, "tests/test_calc.py::test_nope", "test_nowhere", "tests/test_calc.py::test_div", "tests/test_calc.py::test_double[7]")
	if !slices.Equal(o.Passed, []string{"tests/test_calc.py::test_div"}) {
		t.Errorf("Passed = %q", o.Passed)
	}
	want := []string{"test_nowhere", "tests/test_calc.py::test_double[7]", "tests/test_calc.py::test_nope"}
	if got := sorted(o.Missing); !slices.Equal(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
	if len(o.Unknown) != 3 || !contains(o.Unknown, "pytest collects no such test") || !contains(o.Unknown, "no test file of the checkout defines test_nowhere") {
		t.Errorf("Unknown = %q", o.Unknown)
	}
}

func TestRunPackagesAndBuild(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, calcRepo)
	writeTree(t, dir, map[string]string{"tests/unit/test_more.py": "def test_more():\n    assert True\n"})
	o, err := d.RunPackages(ctx, dir, []string{"tests/unit", "nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Passed, []string{"tests/unit/test_more.py::test_more"}) || len(o.Failed) != 0 || !slices.Equal(o.Missing, []string{"nowhere"}) {
		t.Errorf("RunPackages(tests/unit) = passed %q failed %+v missing %q", o.Passed, o.Failed, o.Missing)
	}
	o, err = d.RunPackages(ctx, dir, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Passed) != 6 || len(o.Failed) != 3 {
		t.Errorf("RunPackages(.) = passed %q failed %q", o.Passed, ids(o.Failed))
	}

	b, err := d.Build(ctx, dir, []string{"tests"})
	if err != nil || len(b.Build) != 0 || len(b.Failed)+len(b.Passed) != 0 {
		t.Fatalf("Build of collecting tests = %+v, %v", b, err)
	}
	writeTree(t, dir, map[string]string{"tests/unit/test_more.py": "def test_more(:\n"})
	b, err = d.Build(ctx, dir, []string{"tests"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Build) != 1 || b.Build[0].Package != "tests/unit/test_more.py" || !strings.Contains(b.Build[0].Message, "SyntaxError") {
		t.Errorf("Build = %+v", b.Build)
	}
}

// A test that replaces pytest's report with a link to a file of the host
// gets nothing of that file into the outcome: reports are read from the
// outbox without following links.
func TestRunRefusesAReportReplacedByALink(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	host := filepath.Join(t.TempDir(), "host-report.xml")
	secret := `<testsuites><testsuite name="pytest"><testcase classname="test_h" name="test_HOST_SECRET"/></testsuite></testsuites>`
	if err := os.WriteFile(host, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	// A reader that followed the link would take the host's file for the
	// run's report.
	if rep, err := report.ParseJUnit(strings.NewReader(secret)); err != nil || len(rep.Passed) != 1 {
		t.Fatalf("the host's file is not a report: %+v, %v", rep, err)
	}
	dir := repo(t, map[string]string{
		"conftest.py": `import os


def pytest_unconfigure(config):
    path = config.option.xmlpath
    if path and os.path.exists(path):
        os.remove(path)
        os.symlink(` + "\"" + host + "\"" + `, path)
        open("planted", "w").close()
`,
		"test_h.py": "def test_h():\n    pass\n",
	})
	o := mustRun(t, ctx, d, dir, 1, "test_h.py::test_h")
	if _, err := os.Stat(filepath.Join(dir, "planted")); err != nil {
		t.Fatalf("the hostile conftest did not plant its link: %v\n%s", err, o.Output)
	}
	all := strings.Join(append(append(append([]string{o.Output}, o.Passed...), o.Missing...), o.Unknown...), "\n")
	for _, f := range o.Failed {
		all += f.Output + f.Message
	}
	if strings.Contains(all, "HOST_SECRET") {
		t.Errorf("the outcome holds the host's file: %s", all)
	}
	if len(o.Passed) != 0 || !slices.Equal(o.Missing, []string{"test_h.py::test_h"}) || !strings.Contains(o.Output, "symbolic link") {
		t.Errorf("a run whose report is a link: passed %q missing %q output %q", o.Passed, o.Missing, o.Output)
	}
}

// Imports write no bytecode, into the checkout or anywhere else the next
// run reads: the checkout's modules are compiled in memory, the
// interpreter's and the environment's read as they were installed.
func TestRunLeavesNoBytecodeInTheCheckout(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	files := map[string]string{
		"calc/__init__.py": "def one():\n    return 1\n",
		"test_pyc.py": `import calc


def test_imports():
    assert calc.one() == 1
`,
	}
	pyc := func(dir string) []string {
		var found []string
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, ".pyc") || e.Name() == "__pycache__") {
				found = append(found, p)
			}
			return nil
		})
		return found
	}
	// Run bare, the same test leaves bytecode behind: what the check
	// below catches.
	bare := repo(t, files)
	py, _ := d.interpreter()
	cmd := exec.Command(py, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_pyc.py")
	cmd.Dir = bare
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONDONTWRITEBYTECODE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bare pytest: %v\n%s", err, out)
	}
	if len(pyc(bare)) == 0 {
		t.Fatal("a bare run left no bytecode: the check below proves nothing")
	}
	dir := repo(t, files)
	o := mustRun(t, ctx, d, dir, 1, "test_pyc.py::test_imports")
	if !slices.Equal(o.Passed, []string{"test_pyc.py::test_imports"}) {
		t.Fatalf("Passed = %q\n%s", o.Passed, o.Output)
	}
	if found := pyc(dir); len(found) != 0 {
		t.Errorf("bytecode in the checkout: %q", found)
	}
	// Nor in the repository's cache.
	if found := pyc(sandbox.CacheDir(ctx)); len(found) != 0 {
		t.Errorf("bytecode in the repository's cache: %q", found)
	}
}

// A run that outlasts its timeout is cut: its tests are missing, their
// file incomplete.
func TestRunTimesOut(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	d.Timeout = 3 * time.Second
	ctx := confined(t)
	dir := repo(t, map[string]string{"test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(600)\n"})
	o := mustRun(t, ctx, d, dir, 1, "test_slow.py::test_slow")
	if !o.TimedOut || !slices.Equal(o.Missing, []string{"test_slow.py::test_slow"}) || !slices.Equal(o.Incomplete, []string{"test_slow.py"}) || o.OK() {
		t.Errorf("timed out %v, missing %q, incomplete %q", o.TimedOut, o.Missing, o.Incomplete)
	}
}

// When pytest itself cannot start (a conftest.py that fails to import, an
// option of the repository's configuration it does not know), each asked
// file is a build failure in pytest's words, and nothing is missing.
func TestRunWhenPytestCannotStart(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	for name, c := range map[string]struct {
		files   map[string]string
		message string
	}{
		"conftest": {map[string]string{"tests/conftest.py": "import not_installed\n"}, "ModuleNotFoundError: No module named 'not_installed'"},
		"addopts":  {map[string]string{"pytest.ini": "[pytest]\naddopts = --no-such-option\n"}, "error: unrecognized arguments: --no-such-option"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"tests/test_a.py": "def test_a():\n    pass\n", "tests/test_b.py": "def test_b():\n    pass\n"}
			for k, v := range c.files {
				files[k] = v
			}
			dir := repo(t, files)
			o := mustRun(t, ctx, d, dir, 2, "tests/test_a.py::test_a", "tests/test_b.py")
			if len(o.Build) != 2 || o.Build[0].Package != "tests/test_a.py" || o.Build[0].Message != c.message {
				t.Fatalf("Build = %+v\n%s", o.Build, o.Output)
			}
			if len(o.Passed)+len(o.Failed)+len(o.Missing) != 0 {
				t.Errorf("passed %q, failed %+v, missing %q", o.Passed, o.Failed, o.Missing)
			}
			if r := o.Runs["tests/test_b.py"]; r.Fail == 0 {
				t.Errorf("the file asked for whole did not fail: %+v", r)
			}
		})
	}
}
