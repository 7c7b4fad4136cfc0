package task

import "testing"

func TestFailureID(t *testing.T) {
	for _, c := range []struct {
		f    Failure
		want string
	}{
		{Failure{Package: "example.com/m/pkg", Test: "TestX/sub"}, "example.com/m/pkg.TestX/sub"},
		{Failure{Test: "TestX"}, "TestX"},
		{Failure{Package: "example.com/m/pkg"}, "example.com/m/pkg"},
		{Failure{Package: "gopkg.in/yaml.v3", Test: "TestY"}, "gopkg.in/yaml.v3.TestY"},
		{Failure{Package: "tests/test_calc.py", Test: "TestAdd::test_sum[1-2]"}, "tests/test_calc.py::TestAdd::test_sum[1-2]"},
		{Failure{Package: "src/calc.test.ts", Test: "calc > adds"}, "src/calc.test.ts::calc > adds"},
	} {
		if got := c.f.ID(); got != c.want {
			t.Errorf("%+v.ID() = %q, want %q", c.f, got, c.want)
		}
	}
}
