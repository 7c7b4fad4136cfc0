package demo

import (
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// What JUnit writes, report.Parse reads back with the same test ids: node
// ids (with a class and a parameter holding "::" and "."), Go ids, a
// skipped test, an erroring one and a file that did not collect.
func TestJUnitReadsBackWithTheSameIDs(t *testing.T) {
	o := testrun.Outcome{
		Passed: []string{"tests/test_a.py::TestC::test_x[a.b::c]", "example.com/m/p.TestY/sub.case"},
		Failed: []task.Failure{
			{Package: "tests/test_a.py", Test: "test_z", Message: "assert 1 == 2 <&>", Output: "tests/test_a.py:9: AssertionError\n"},
			{Package: "tests/test_b.py", Test: "test_fixture", Kind: "error", Message: "fixture 'db' not found"},
		},
		Build: []task.Failure{{Package: "tests/test_broken.py", Message: "SyntaxError: invalid syntax", Output: "E   SyntaxError: invalid syntax\n"}},
		Runs: map[string]report.Runs{
			"tests/test_a.py::test_skipped": {Skip: 1},
			"tests/test_a.py::test_z":       {Fail: 1},
		},
	}
	data, err := JUnit("python", o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if rep.Format != "junit" || !slices.Equal(rep.Passed, o.Passed) || !slices.Equal(rep.Skipped, []string{"tests/test_a.py::test_skipped"}) {
		t.Fatalf("passed %q skipped %q (format %s), want %q and the skipped test:\n%s", rep.Passed, rep.Skipped, rep.Format, o.Passed, data)
	}
	if len(rep.Failures) != 2 || rep.Failures[0].ID() != "tests/test_a.py::test_z" || rep.Failures[0].Message != "assert 1 == 2 <&>" ||
		rep.Failures[1].ID() != "tests/test_b.py::test_fixture" || rep.Failures[1].Kind != "error" {
		t.Fatalf("failures = %+v", rep.Failures)
	}
	if len(rep.BuildErrors) != 1 || rep.BuildErrors[0].Package != "tests/test_broken.py" {
		t.Fatalf("build errors = %+v", rep.BuildErrors)
	}
	if rep.Total != 5 {
		t.Errorf("total = %d, want 5 (the build error is no test)", rep.Total)
	}
}
