package report

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

func parseFile(t *testing.T, name string) Result {
	t.Helper()
	data, err := os.ReadFile("testdata/junit/" + name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// failure is the parts of a failure these tests check.
type failure struct {
	id, message, kind string
	frames            []string
	outputHas         string
}

func checkFailures(t *testing.T, got []task.Failure, want []failure) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d failures, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID() != w.id || g.Message != w.message || g.Kind != w.kind || !slices.Equal(g.Frames, w.frames) || !strings.Contains(g.Output, w.outputHas) {
			t.Errorf("failure %d = %q %q kind %q frames %v output %q\nwant %q %q kind %q frames %v output with %q",
				i, g.ID(), g.Message, g.Kind, g.Frames, g.Output, w.id, w.message, w.kind, w.frames, w.outputHas)
		}
	}
}

func TestParseJUnitSurefire(t *testing.T) {
	res := parseFile(t, "surefire.xml")
	if res.Total != 4 || !slices.Equal(res.Passed, []string{"com.example.cart.CartTest.addsItems"}) {
		t.Errorf("total %d passed %v", res.Total, res.Passed)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "com.example.cart.CartTest.appliesDiscount", message: "expected: <90> but was: <100>",
			frames: []string{"AssertionUtils.java:55", "CartTest.java:42"}, outputHas: "rules.yaml"},
		{id: "com.example.cart.CartTest.loadsPrices", message: "Connection refused", kind: "error",
			frames: []string{"PriceClient.java:17"}, outputHas: "java.net.ConnectException"},
	})
}

func TestParseJUnitPytest(t *testing.T) {
	res := parseFile(t, "pytest.xml")
	if res.Total != 4 || len(res.Passed) != 1 {
		t.Errorf("total %d passed %v", res.Total, res.Passed)
	}
	// A skipped test ran: it is named, neither passed nor failed.
	if !slices.Equal(res.Skipped, []string{"tests.test_db.test_slow"}) {
		t.Errorf("skipped %q", res.Skipped)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "tests.test_parse.TestParse.test_unicode", message: "AssertionError: assert 'é' == 'e'\n  - e\n  + é",
			frames: []string{"tests/test_parse.py:14"}, outputHas: "parsing é"},
		{id: "tests.test_db.test_connect", message: `failed on setup with "OSError: [Errno 98] Address already in use"`, kind: "error",
			frames: []string{"tests/conftest.py:9"}, outputHas: "s.bind"},
	})
}

func TestParseJUnitGotestsum(t *testing.T) {
	res := parseFile(t, "gotestsum.xml")
	if res.Total != 3 || !slices.Equal(res.Passed, []string{"example.com/shop/cart.TestTotal"}) {
		t.Errorf("total %d passed %v", res.Total, res.Passed)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "example.com/shop/cart.TestDiscount/at_threshold", message: "Total() = 100, want 90",
			frames: []string{"cart_test.go:31"}, outputHas: "--- FAIL"},
	})
	// A package that does not compile is a build error, not a test.
	if len(res.BuildErrors) != 1 || res.BuildErrors[0].Package != "example.com/shop/pay" || res.BuildErrors[0].Message != "undefined: gateway" {
		t.Errorf("build errors = %+v", res.BuildErrors)
	}
}

func TestParseJUnitNestedSuitesStaleTotals(t *testing.T) {
	res := parseFile(t, "surefire-nested.xml")
	// The inner suite says 99 tests; there are two testcases.
	if res.Total != 2 || !slices.Equal(res.Passed, []string{"outer.shallow"}) {
		t.Errorf("total %d passed %v", res.Total, res.Passed)
	}
	checkFailures(t, res.Failures, []failure{
		{id: "com.example.inner.InnerTest.deep", message: "java.lang.AssertionError", frames: []string{"InnerTest.java:8"}, outputHas: "InnerTest.deep"},
	})
}
