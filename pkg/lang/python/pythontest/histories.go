package pythontest

// The calc history: four commits of a pure-Python package whose third,
// Broken, makes tests/test_calc.py::test_total fail ("assert 2 == 3",
// raised through calc/ops.py); the others keep every test passing. It
// needs only the standard library and pytest.
var Calc = []string{
	`calc: add and total

-- pyproject.toml --
[project]
name = "calc"
version = "0.1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
-- calc/__init__.py --
-- calc/ops.py --
def add(x, y):
    return x + y


def total(xs):
    out = 0
    for x in xs:
        out = add(out, x)
    return out
-- tests/__init__.py --
-- tests/test_calc.py --
from calc.ops import add, total


def test_add():
    assert add(1, 2) == 3


def test_total():
    assert total([1, 2]) == 3
`,
	`calc: document the package

-- README.md --
calc adds numbers.
`,
	`calc: total starts from the first item

-- calc/ops.py --
def add(x, y):
    return x + y


def total(xs):
    out = 0
    for x in xs[1:]:
        out = add(out, x)
    return out
`,
	`calc: a note on totals

-- README.md --
calc adds numbers, and totals lists of them.
`,
}

// Broken is the index in Calc of the commit that breaks Test.
const Broken = 2

// Test is the test Broken breaks, as pytest names it (its node id);
// TestClassname and TestName are how pytest's JUnit report names it;
// TestPassing passes at every commit; FailureMessage is the failing
// assertion's message.
const (
	Test           = "tests/test_calc.py::test_total"
	TestClassname  = "tests.test_calc"
	TestName       = "test_total"
	TestPassing    = "tests/test_calc.py::test_add"
	FailureMessage = "assert 2 == 3"
)

// CalcUncollected is Calc whose third commit renames total to sum_all, so
// that tests/test_calc.py, which imports total, no longer collects: CI's
// pytest reports the file's collection error.
var CalcUncollected = []string{Calc[0], Calc[1], `calc: total is sum_all

-- calc/ops.py --
def add(x, y):
    return x + y


def sum_all(xs):
    out = 0
    for x in xs:
        out = add(out, x)
    return out
`, Calc[3]}
