package task

import (
	"strings"
	"testing"
)

// An id joins an import path and its test with "."; a package that a
// registered rule claims as a file of tests, with "::". pkg/task knows no
// language's files: until a driver registers its rule (here a test's own,
// for files ending ".toy"), every package is an import path.
func TestFailureID(t *testing.T) {
	toy := Failure{Package: "tests/calc_test.toy", Test: "adds > one"}
	if got, want := toy.ID(), "tests/calc_test.toy.adds > one"; got != want {
		t.Errorf("before any rule, %+v.ID() = %q, want %q", toy, got, want)
	}
	RegisterTestFileRule(func(pkg string) bool { return strings.HasSuffix(pkg, ".toy") })
	for _, c := range []struct {
		f    Failure
		want string
	}{
		{Failure{Package: "example.com/m/pkg", Test: "TestX/sub"}, "example.com/m/pkg.TestX/sub"},
		{Failure{Test: "TestX"}, "TestX"},
		{Failure{Package: "example.com/m/pkg"}, "example.com/m/pkg"},
		{Failure{Package: "gopkg.in/yaml.v3", Test: "TestY"}, "gopkg.in/yaml.v3.TestY"},
		{toy, "tests/calc_test.toy::adds > one"},
		{Failure{Package: "tests/calc_test.toy"}, "tests/calc_test.toy"},
	} {
		if got := c.f.ID(); got != c.want {
			t.Errorf("%+v.ID() = %q, want %q", c.f, got, c.want)
		}
	}
}
