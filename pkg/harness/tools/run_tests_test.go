package tools

import (
	"testing"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

func TestRunTests(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, RunTests, RunTestsArgs{})
	// Failing tests are the tool's answer, not an error of the call.
	wantContent(t, obs, false, "FAIL: 0 passed, 1 failed (the task's failing tests)", "--- FAIL: example.com/calc/calc.TestAdd", "Add(2, 3) = -1, want 5")
	if obs.Tests == nil || obs.Tests.OK || len(obs.Tests.Failed) != 1 || obs.Tests.Failed[0].Test != "TestAdd" {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
	if s.oraclePassed {
		t.Error("a failing oracle run counts as passed")
	}

	obs = do(t, s, RunTests, RunTestsArgs{Tests: []string{"TestSub"}})
	wantContent(t, obs, false, "PASS: 1 passed, 0 failed", "Passed: example.com/calc/calc.TestSub")
	if obs.Tests == nil || !obs.Tests.OK {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
	if s.oraclePassed {
		t.Error("a run of other tests counts as the oracle")
	}

	wantContent(t, do(t, s, RunTests, RunTestsArgs{Tests: []string{"TestNope"}}), true, "Not found: resolve TestNope", "test not found")

	// A name that exists nowhere does not stop the others.
	obs = do(t, s, RunTests, RunTestsArgs{Tests: []string{"TestNope", "TestSub"}})
	wantContent(t, obs, false, "INCOMPLETE: 1 passed, 0 failed, 1 unknown", "Not found: resolve TestNope", "Passed: example.com/calc/calc.TestSub")

	// A package runs whole; an explicit list is not labelled as the task's.
	obs = do(t, s, RunTests, RunTestsArgs{Tests: []string{"./calc"}})
	wantContent(t, obs, false, "FAIL: 1 passed, 1 failed (these include the task's failing tests)", "--- FAIL: example.com/calc/calc.TestAdd")

	// Listing the tests of a package runs nothing.
	obs = do(t, s, RunTests, RunTestsArgs{List: true})
	wantContent(t, obs, false, "example.com/calc/calc (2 tests):\n  TestAdd\n  TestSub\n")

	// A broken build is reported as such.
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a +  }\n"})
	obs = do(t, s, RunTests, RunTestsArgs{Tests: []string{"example.com/calc/calc.TestAdd", "TestSub"}})
	wantContent(t, obs, false, "BUILD FAILED")
	if obs.Tests == nil || len(obs.Tests.Build) == 0 {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
}

// run_tests with localize ranks the line only the failing test runs first.
func TestRunTestsLocalize(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, RunTests, RunTestsArgs{Localize: true})
	wantContent(t, obs, false, "spectrum-based fault localization (Ochiai) over the coverage of 1 failing test and 1 passing test",
		"calc/calc.go:10 score 1.00 (run by 1 failing, 0 passing): return a - b")
	if obs.Tests == nil || len(obs.Tests.Suspects) == 0 || obs.Tests.Suspects[0].File != "calc/calc.go" {
		t.Fatalf("suspects = %+v", obs.Tests)
	}
}

// A run heads its report FAIL only when something failed: a run in which
// nothing failed but a test asked for did not run is INCOMPLETE.
func TestRunVerdicts(t *testing.T) {
	failed := []task.Failure{{Package: "p", Test: "TestA"}}
	for _, c := range []struct {
		name string
		out  testrun.Outcome
		want string
	}{
		{"all passed", testrun.Outcome{Passed: []string{"p.TestA"}}, "PASS"},
		{"one failed", testrun.Outcome{Failed: failed}, "FAIL"},
		{"did not build", testrun.Outcome{Build: failed}, "FAIL"},
		{"timed out", testrun.Outcome{Passed: []string{"p.TestA"}, TimedOut: true}, "FAIL"},
		{"did not run", testrun.Outcome{Passed: []string{"p.TestA"}, Missing: []string{"p.TestB"}}, "INCOMPLETE"},
		{"unknown", testrun.Outcome{Passed: []string{"p.TestA"}, Missing: []string{"TestNope"}, Unknown: []string{"resolve TestNope"}}, "INCOMPLETE"},
		{"failed and unknown", testrun.Outcome{Failed: failed, Missing: []string{"TestNope"}, Unknown: []string{"resolve TestNope"}}, "FAIL"},
	} {
		if got := verdictOf(c.out); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
