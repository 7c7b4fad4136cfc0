package python

import (
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// The driver registers its files as files of tests: a failure of a Python
// file is named as pytest names it, and only Python files are claimed.
func TestRegistersTestFileRule(t *testing.T) {
	f := task.Failure{Package: "tests/test_calc.py", Test: "TestAdd::test_sum[1-2]"}
	if got, want := f.ID(), "tests/test_calc.py::TestAdd::test_sum[1-2]"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	for _, pkg := range []string{"tests/test_calc.py", "a.py"} {
		if !task.IsTestFilePath(pkg) {
			t.Errorf("%s is not claimed as a file of tests", pkg)
		}
	}
	if task.IsTestFilePath("example.com/pyproj") || task.IsTestFilePath("tests/data.pyc") {
		t.Error("a package that is no Python file is claimed")
	}
}
