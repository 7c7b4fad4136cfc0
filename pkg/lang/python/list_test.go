package python

import (
	"slices"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, calcRepo)
	writeTree(t, dir, map[string]string{"tests/unit/test_more.py": "def test_more():\n    pass\n"})
	listed, err := d.List(ctx, dir, []string{"tests"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed[0].ImportPath != "tests/test_calc.py" || listed[1].ImportPath != "tests/unit/test_more.py" {
		t.Fatalf("listed = %+v", listed)
	}
	want := []string{"test_add", "test_div", "test_div_by_zero", "test_double[1]", "test_double[2.5]", "test_double[a b]",
		"TestCalc::test_double_int", "TestCalc::test_add_zero", "TestCalc::test_skipped", "TestCalc::test_xfail"}
	if !slices.Equal(listed[0].Tests, want) {
		t.Errorf("tests of test_calc.py = %q", listed[0].Tests)
	}
	// Nothing ran: the buggy add would have failed a run, not a list.
	writeTree(t, dir, map[string]string{"tests/unit/test_broken.py": "def test_x(:\n"})
	listed, err = d.List(ctx, dir, []string{"tests/unit"})
	if err == nil || !strings.Contains(err.Error(), "tests/unit/test_broken.py: SyntaxError") {
		t.Errorf("List of a file that does not collect: %v", err)
	}
	if len(listed) != 1 || !slices.Equal(listed[0].Tests, []string{"test_more"}) {
		t.Errorf("what collected is not returned with the error: %+v", listed)
	}
	if _, err := d.List(ctx, dir, []string{"nowhere"}); err == nil {
		t.Error("List of a package that is not there succeeded")
	}
}
