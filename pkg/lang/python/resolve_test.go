package python

import (
	"errors"
	"testing"

	"github.com/redfix/redfix/pkg/testrun"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{
		"calc/__init__.py":  "def add(a, b):\n    return a + b\n",
		"tests/__init__.py": "",
		"tests/test_calc.py": `import pytest


def test_add():
    pass


class TestCalc:
    @pytest.mark.parametrize("x", [1, 2.5])
    def test_param(self, x):
        pass

    class TestInner:
        def test_deep(self):
            pass


def helper():
    def test_local():
        pass
`,
		"tests/unit/test_other.py": "def test_shared():\n    pass\n\n\ndef test_unique():\n    pass\n",
		"tests/unit/test_more.py":  "def test_shared():\n    pass\n",
		".venv/lib/test_venv.py":   "def test_in_venv():\n    pass\n",
	})
	d := Driver{}
	for _, c := range []struct {
		id   string
		want testrun.Target
	}{
		// Node ids.
		{"tests/test_calc.py::test_add", testrun.Target{ID: "tests/test_calc.py::test_add", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "test_add"}},
		{"tests/test_calc.py::TestCalc::test_param[2.5]", testrun.Target{ID: "tests/test_calc.py::TestCalc::test_param[2.5]", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::test_param[2.5]"}},
		{"./tests/test_calc.py::test_add", testrun.Target{ID: "tests/test_calc.py::test_add", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "test_add"}},
		// A node id from a run whose rootdir was tests/.
		{"unit/test_other.py::test_unique", testrun.Target{ID: "tests/unit/test_other.py::test_unique", ImportPath: "tests/unit/test_other.py", Dir: "tests/unit", Test: "test_unique"}},
		// Files and directories: packages.
		{"tests/test_calc.py", testrun.Target{ID: "tests/test_calc.py", ImportPath: "tests/test_calc.py", Dir: "tests"}},
		{"tests/unit", testrun.Target{ID: "tests/unit", ImportPath: "tests/unit", Dir: "tests/unit"}},
		{".", testrun.Target{ID: ".", ImportPath: ".", Dir: "."}},
		// Bare names, unique in the checkout.
		{"test_add", testrun.Target{ID: "tests/test_calc.py::test_add", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "test_add"}},
		{"test_param[1]", testrun.Target{ID: "tests/test_calc.py::TestCalc::test_param[1]", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::test_param[1]"}},
		{"TestCalc::test_param", testrun.Target{ID: "tests/test_calc.py::TestCalc::test_param", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::test_param"}},
		{"TestInner::test_deep", testrun.Target{ID: "tests/test_calc.py::TestCalc::TestInner::test_deep", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::TestInner::test_deep"}},
		{"TestCalc", testrun.Target{ID: "tests/test_calc.py::TestCalc", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc"}},
		// pytest's JUnit dialect: classname.name.
		{"tests.test_calc.TestCalc.test_param[2.5]", testrun.Target{ID: "tests/test_calc.py::TestCalc::test_param[2.5]", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::test_param[2.5]"}},
		{"tests.test_calc.TestCalc.TestInner.test_deep", testrun.Target{ID: "tests/test_calc.py::TestCalc::TestInner::test_deep", ImportPath: "tests/test_calc.py", Dir: "tests", Test: "TestCalc::TestInner::test_deep"}},
		{"tests.unit.test_other.test_unique", testrun.Target{ID: "tests/unit/test_other.py::test_unique", ImportPath: "tests/unit/test_other.py", Dir: "tests/unit", Test: "test_unique"}},
		// A dialect whose dotted path starts below the root.
		{"unit.test_more.test_shared", testrun.Target{ID: "tests/unit/test_more.py::test_shared", ImportPath: "tests/unit/test_more.py", Dir: "tests/unit", Test: "test_shared"}},
		// A collection error's "test": the module.
		{"tests.test_calc", testrun.Target{ID: "tests/test_calc.py", ImportPath: "tests/test_calc.py", Dir: "tests"}},
	} {
		got, err := d.Resolve(dir, c.id)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %+v, %v\nwant %+v", c.id, got, err, c.want)
		}
	}
	for _, c := range []struct {
		id   string
		want error
	}{
		{"test_shared", testrun.ErrAmbiguous},
		{"test_nowhere", testrun.ErrNotFound},
		{"test_local", testrun.ErrNotFound},   // inside a function: not a test
		{"test_in_venv", testrun.ErrNotFound}, // in a virtual environment
		{"tests/test_gone.py::test_add", testrun.ErrNotFound},
		{"tests.test_gone.test_add", testrun.ErrNotFound},
		{"../outside.py::test_x", testrun.ErrNotFound},
		{"/etc/passwd.py", testrun.ErrNotFound},
		{"-p.py::x", testrun.ErrNotFound},
		{"", testrun.ErrNotFound},
		{"not a name", testrun.ErrNotFound},
	} {
		_, err := d.Resolve(dir, c.id)
		if !errors.Is(err, c.want) {
			t.Errorf("Resolve(%q) = %v, want %v", c.id, err, c.want)
		}
	}
}
