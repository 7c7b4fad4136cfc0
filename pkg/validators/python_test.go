package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
)

// A Python project for the integrity gate: the gate reads the patch and
// the files, and runs no Python.
const (
	pyCalc = `"""Arithmetic."""

UNITS = {"one": 1, "ten": 10}


def add(x, y):
    return x - y


def label(n):
    if n == 7:
        return "seven"
    if n == -15:
        return "minus fifteen"
    return str(n)
`
	pyCalcTest = `import pytest

from calc.calc import add, label

CASES = [
    (40, 2, 42),
    (-7, -8, -15),
]


@pytest.mark.parametrize("x, y, want", CASES)
def test_add(x, y, want, base):
    assert add(x, y) == want
    assert label(42 + base) == (
        "forty-two"
    )


class TestLabel:
    def test_seven(self):
        assert label(7) == "seven"

    def test_raises(self):
        with pytest.raises(TypeError):
            label()
`
	pyConftest = `import pytest


@pytest.fixture
def base():
    return 1000
`
)

// newPyFixture is the project at its base commit.
func newPyFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{
		"pyproject.toml": "[project]\nname = \"calc\"\n", "calc/__init__.py": "\"\"\"calc.\"\"\"\n", "calc/calc.py": pyCalc,
		"tests/conftest.py": pyConftest, "tests/test_calc.py": pyCalcTest, "tests/data/expected.json": "{\"sum\": 42}\n",
	})
	base, err := repo.CommitAll(ctx, "calc")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{repo: repo, base: base}
}

// pyInput is the change as a candidate of the Python driver, for the
// failing test_add[40-2-42].
func (f *fixture) pyInput(t *testing.T, change map[string]string) Input {
	t.Helper()
	write(t, f.repo.Dir, change)
	patch, err := f.repo.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Dir: f.repo.Dir, Base: f.base, Patch: patch, Lang: python.Driver{},
		Task: task.Task{ID: "t1", Commit: f.base, Failures: []task.Failure{{Package: "tests/test_calc.py", Test: "test_add[40-2-42]"}}},
	}
}

func TestPythonIntegrity(t *testing.T) {
	t.Parallel()
	fixed := strings.Replace(pyCalc, "return x - y", "return x + y", 1)
	testAdd := "def test_add(x, y, want, base):\n"
	for _, c := range []struct {
		name   string
		strict bool // test edits not allowed
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{name: "honest fix", change: map[string]string{"calc/calc.py": fixed}},
		{
			name:   "a new test, test edits allowed",
			change: map[string]string{"calc/calc.py": fixed, "tests/test_calc.py": pyCalcTest + "\n\ndef test_zero():\n    assert add(0, 0) == 0\n"},
		},
		{
			name:   "new tests named after skipping and deselecting",
			change: map[string]string{"tests/test_calc.py": pyCalcTest + "\n\ndef test_deselect_rows():\n    assert add(1, 1) == 2\n\n\ndef test_skip_list():\n    assert label(3) == \"3\"\n"},
		},
		{
			name:   "pytest's options in pyproject.toml",
			change: map[string]string{"calc/calc.py": fixed, "pyproject.toml": "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = \"--deselect tests/test_calc.py::test_add\"\n"},
			detail: []string{"pyproject.toml:4: adds pytest configuration (it decides which tests run and how they count): [tool.pytest.ini_options]", `pyproject.toml:5: adds pytest configuration`},
		},
		{
			name:   "a dependency in pyproject.toml",
			change: map[string]string{"calc/calc.py": fixed, "pyproject.toml": "[project]\nname = \"calc\"\ndependencies = [\"attrs\"]\n"},
		},
		{
			name:   "pytest.ini",
			change: map[string]string{"pytest.ini": "[pytest]\npython_functions = check_*\n"},
			detail: []string{"pytest.ini: adds pytest's configuration"},
		},
		{
			name:   "pytest's variable spelled in two",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return x - y\n", "    if os.environ.get(\"PYTEST\" + \"_CURRENT_TEST\"):\n        return x + y\n    return x - y\n", 1)},
			detail: []string{"calc/calc.py:7: detects that it runs under test"},
		},
		{
			name:   "a moved assertion",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "    assert add(x, y) == want\n    assert label(42 + base) == (\n        \"forty-two\"\n    )\n", "    assert label(42 + base) == (\n        \"forty-two\"\n    )\n    assert add(x, y) == want\n", 1)},
		},
		{
			name:   "test edits not allowed",
			strict: true,
			change: map[string]string{"tests/test_calc.py": pyCalcTest + "\n\ndef test_zero():\n    assert add(0, 0) == 0\n"},
			detail: []string{"tests/test_calc.py: edits test file (test edits are not allowed for this repository)"},
		},
		{
			name:   "skipif mark",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, testAdd, "@pytest.mark.skipif(True, reason=\"later\")\n"+testAdd, 1)},
			detail: []string{`tests/test_calc.py:12: adds a skip: @pytest.mark.skipif(True, reason="later")`},
		},
		{
			name:   "module-wide mark",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "CASES = [", "pytestmark = pytest.mark.skip\n\nCASES = [", 1)},
			detail: []string{"adds a skip: pytestmark = pytest.mark.skip"},
		},
		{
			name:   "unittest's skip",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "    def test_seven(self):\n", "    def test_seven(self):\n        self.skipTest(\"later\")\n", 1)},
			detail: []string{`adds a skip: self.skipTest("later")`},
		},
		{
			name:   "not collected",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "class TestLabel:\n", "class TestLabel:\n    __test__ = False\n", 1)},
			detail: []string{"adds a skip: __test__ = False"},
		},
		{
			name:   "a line of a multi-line assertion edited",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "        \"forty-two\"\n", "        label(42 + base)\n", 1)},
			detail: []string{`tests/test_calc.py:14: removes or edits an assertion: assert label(42 + base) == (`},
		},
		{
			name:   "pytest.raises removed",
			change: map[string]string{"tests/test_calc.py": strings.Replace(pyCalcTest, "        with pytest.raises(TypeError):\n            label()\n", "        label(1)\n", 1)},
			detail: []string{"tests/test_calc.py:24: removes an assertion: with pytest.raises(TypeError):"},
		},
		{
			name:   "test class deleted",
			change: map[string]string{"tests/test_calc.py": pyCalcTest[:strings.Index(pyCalcTest, "class TestLabel:")]},
			detail: []string{"tests/test_calc.py:19: deletes test TestLabel", "deletes test test_seven", "deletes test test_raises"},
		},
		{
			name:   "test data",
			change: map[string]string{"tests/data/expected.json": "{\"sum\": 41}\n"},
			detail: []string{"tests/data/expected.json: changes test data the tests compare with (expected output)"},
		},
		{
			name:   "snapshot outside the tests",
			change: map[string]string{"calc/__snapshots__/calc.ambr": "# name: test_label\n  'seven'\n"},
			detail: []string{"calc/__snapshots__/calc.ambr: adds test file"},
			strict: true,
		},
		{
			name:   "conftest, even with test edits allowed",
			change: map[string]string{"tests/conftest.py": pyConftest + "\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n"},
			detail: []string{"tests/conftest.py: edits pytest's conftest.py"},
		},
		{
			name:   "condition on a table's input",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "def add(x, y):\n", "def add(x, y):\n    if (x, y) == (40, 2):\n        return 42\n", 1)},
			detail: []string{"calc/calc.py:7: special-cases a value of the failing test: (x, y) == (40, 2) compares with 40, which test_add uses at tests/test_calc.py:6"},
		},
		{
			name:   "membership in the expected strings",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return str(n)\n", "    if n in (42, 3):\n        return \"forty-two\"\n    return str(n)\n", 1)},
			detail: []string{"n in (42, 3) compares with 42"},
		},
		{
			name:   "a fixture's value from conftest.py, through match",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return str(n)\n", "    match n:\n        case 1000:\n            return \"\"\n    return str(n)\n", 1)},
			detail: []string{"case 1000 compares with 1000, which test_add uses at tests/conftest.py:6"},
		},
		{
			name:   "startswith a test's string",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return str(n)\n", "    if str(n).startswith(\"forty-two\"):\n        return n\n    return str(n)\n", 1)},
			detail: []string{`str(n).startswith("forty-two") compares with "forty-two"`},
		},
		{
			name:   "a value the code already knew",
			change: map[string]string{"calc/calc.py": strings.Replace(fixed, "    if n == 7:\n", "    if n == -15 or n == 10:\n        return \"small\"\n    if n == 7:\n", 1)},
		},
		{
			name:   "environment of pytest",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return x - y\n", "    if os.environ.get(\"PYTEST_CURRENT_TEST\"):\n        return x + y\n    return x - y\n", 1)},
			detail: []string{`calc/calc.py:7: detects that it runs under test by pytest's environment variables (PYTEST_CURRENT_TEST, PYTEST_…): if os.environ.get("PYTEST_CURRENT_TEST"):`},
		},
		{
			name:   "a test's frame on the stack",
			change: map[string]string{"calc/calc.py": strings.Replace(pyCalc, "    return x - y\n", "    caller = inspect.stack()[1].function\n    if caller.startswith(\"test_\"):\n        return x + y\n    return x - y\n", 1)},
			detail: []string{"calc/calc.py:7: detects that it runs under test by looking for a test on the call stack: caller = inspect.stack()[1].function"},
		},
		{
			name:   "a comment about pytest",
			change: map[string]string{"calc/calc.py": strings.Replace(fixed, "def add(x, y):\n", "# PYTEST_CURRENT_TEST is not read here.\ndef add(x, y):\n", 1)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newPyFixture(t)
			in := f.pyInput(t, c.change)
			v := New(Config{AllowTestEdits: !c.strict}, nil)
			g, err := v.integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}
