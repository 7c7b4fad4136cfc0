package all

import (
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// With every driver registered, a test's id is its runner's: a Go
// package's import path joined with ".", a test of a file the Python or
// the Node driver claims joined with "::" (each driver's rule, registered
// with task.RegisterTestFileRule when its package loads).
func TestTestIDsOfEveryDriver(t *testing.T) {
	for _, c := range []struct {
		f    task.Failure
		want string
	}{
		{task.Failure{Package: "example.com/m/pkg", Test: "TestX/sub"}, "example.com/m/pkg.TestX/sub"},
		{task.Failure{Package: "gopkg.in/yaml.v3", Test: "TestY"}, "gopkg.in/yaml.v3.TestY"},
		{task.Failure{Package: "tests/test_calc.py", Test: "TestAdd::test_sum[1-2]"}, "tests/test_calc.py::TestAdd::test_sum[1-2]"},
		{task.Failure{Package: "src/calc.test.ts", Test: "calc > adds"}, "src/calc.test.ts::calc > adds"},
		{task.Failure{Package: "lib/a.spec.mjs", Test: "a"}, "lib/a.spec.mjs::a"},
		{task.Failure{Package: "tests/test_calc.py"}, "tests/test_calc.py"},
	} {
		if got := c.f.ID(); got != c.want {
			t.Errorf("%+v.ID() = %q, want %q", c.f, got, c.want)
		}
	}
}
