package testrun

import (
	"reflect"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// fileScope holds, for a target, the id itself and those beneath it
// ("f.x::t" under "f.x"), and a build failure of its file.
var fileScope = Scope{
	Under: func(t Target, id string) bool { return id == t.ID || strings.HasPrefix(id, t.ID+"::") },
	BrokenFor: func(t Target, build []task.Failure) bool {
		for _, b := range build {
			if b.Package == t.ImportPath {
				return true
			}
		}
		return false
	},
}

func TestTally(t *testing.T) {
	file := Target{ID: "a.py", ImportPath: "a.py"}
	one := Target{ID: "b.py::t1", ImportPath: "b.py", Test: "t1"}
	gone := Target{ID: "c.py::t9", ImportPath: "c.py", Test: "t9"}
	broken := Target{ID: "d.py", ImportPath: "d.py"}
	fail := func(pkg, test string) task.Failure {
		return task.Failure{Package: pkg, Test: test, Message: "boom " + test}
	}
	runs := []Run{
		{Passed: []string{"a.py::p", "b.py::t1"}, Failed: []task.Failure{fail("a.py", "q"), fail("e.py", "other")}, Build: []task.Failure{{Package: "d.py"}}},
		{Passed: []string{"a.py::p", "a.py::q"}, Skipped: []string{"b.py::t1"}, Build: []task.Failure{{Package: "d.py"}}},
	}
	targets := []Target{file, one, gone, broken}
	out := Tally(Outcome{Runs: map[string]report.Runs{}}, targets, runs, []bool{false, true}, true, fileScope)

	if got, want := out.Runs["a.py::q"], (report.Runs{Pass: 1, Fail: 1}); got != want {
		t.Errorf("a.py::q runs %+v, want %+v", got, want)
	}
	if got, want := out.Runs["a.py"], (report.Runs{Fail: 2}); got != want {
		t.Errorf("the file target's runs %+v, want %+v: failed in the run where a test under it failed, and in the run that timed out", got, want)
	}
	if got, want := out.Runs["b.py::t1"], (report.Runs{Pass: 1, Skip: 1}); got != want {
		t.Errorf("b.py::t1 runs %+v, want %+v", got, want)
	}
	if len(out.Failed) != 1 || out.Failed[0].Message != "boom q" {
		t.Errorf("failed %+v, want a.py::q's first failure", out.Failed)
	}
	if len(out.Others) != 1 || out.Others[0].Package != "e.py" {
		t.Errorf("others %+v, want the failure outside the targets", out.Others)
	}
	if !reflect.DeepEqual(out.Missing, []string{"c.py::t9"}) || !reflect.DeepEqual(out.Incomplete, []string{"c.py"}) {
		t.Errorf("missing %v, incomplete %v; want the target that never ran, incomplete as a run timed out", out.Missing, out.Incomplete)
	}
	if got, want := out.Runs["d.py"], (report.Runs{Fail: 2}); got != want || len(out.Build) != 1 {
		t.Errorf("the broken file's runs %+v (want %+v), build failures %+v (want one, however often reported)", got, want, out.Build)
	}
	for _, id := range out.Passed {
		if id == "a.py" {
			t.Errorf("the file target passed, though a test under it failed once: %v", out.Passed)
		}
	}

	// Not their own runs: every test is reported as asked, none missing.
	out = Tally(Outcome{Runs: map[string]report.Runs{}}, targets, runs, []bool{false, false}, false, fileScope)
	if len(out.Others) != 0 || len(out.Failed) != 2 || len(out.Missing) != 0 {
		t.Errorf("not own: failed %d, others %d, missing %v; want both failures as failed and nothing missing", len(out.Failed), len(out.Others), out.Missing)
	}
}
