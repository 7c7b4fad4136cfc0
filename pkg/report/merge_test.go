package report

import (
	"reflect"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

func TestMerge(t *testing.T) {
	a := Result{Format: "go-test-json", Total: 3, Passed: []string{"p.TestA"}, Failures: []task.Failure{{Package: "p", Test: "TestB"}},
		Incomplete: []string{"q"}, Runs: map[string]Runs{"p.TestA": {Pass: 1}, "p.TestB": {Fail: 2}}}
	b := Result{Format: "go-test-json", Total: 2, Failures: []task.Failure{{Package: "r", Test: "TestC"}}, BuildErrors: []task.Failure{{Package: "s"}},
		NotRun: []string{"r.TestD"}, Runs: map[string]Runs{"p.TestB": {Pass: 1}, "r.TestC": {Fail: 1}}}
	got := Merge(a, b)
	want := Result{Format: "go-test-json", Total: 5, Passed: []string{"p.TestA"},
		Failures:    []task.Failure{{Package: "p", Test: "TestB"}, {Package: "r", Test: "TestC"}},
		BuildErrors: []task.Failure{{Package: "s"}}, NotRun: []string{"r.TestD"}, Incomplete: []string{"q"},
		Runs: map[string]Runs{"p.TestA": {Pass: 1}, "p.TestB": {Pass: 1, Fail: 2}, "r.TestC": {Fail: 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %+v\nwant %+v", got, want)
	}
	if a.Runs["p.TestB"] != (Runs{Fail: 2}) {
		t.Errorf("Merge changed its input: %+v", a.Runs)
	}
	if m := Merge(); !reflect.DeepEqual(m, Result{}) {
		t.Errorf("Merge() = %+v, want the zero result", m)
	}
}
