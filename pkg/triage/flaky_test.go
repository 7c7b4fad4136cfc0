package triage

import (
	"errors"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/lang/golang"
)

func TestReproduceFlaky(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, _ := flakyRepo(t)
	rep, err := Reproduce(ctx, golang.Runner{}, f.Dir, []string{"example.com/flaky.TestFlaky"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Runs 1, 3 and 5 fail.
	if rep.Flakiness.Runs != 5 || rep.Flakiness.Failures != 3 || rep.Flakiness.Verdict != VerdictFlaky {
		t.Errorf("flakiness = %+v, want 3/5 flaky", rep.Flakiness)
	}
	if rep.Invocations != 1 {
		t.Errorf("Invocations = %d, want one go test -count 5", rep.Invocations)
	}
	if len(rep.Tests) != 1 || rep.Tests[0].Failure == nil || rep.Tests[0].Failure.Message != "run 1: odd runs fail" {
		t.Errorf("evidence = %+v", rep.Tests)
	}
}

// A panic ends the test binary after one run: the rest are run again.
func TestReproducePanicsRunEveryTime(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	f.Commit("panics", map[string]string{
		"go.mod":     "module example.com/p\n\ngo 1.22\n",
		"p_test.go":  "package p\n\nimport \"testing\"\n\nfunc TestNilMap(t *testing.T) {\n\tvar m map[string]int\n\tm[\"x\"] = 1\n}\n\nfunc TestFine(t *testing.T) {}\n",
		"p_other.go": "package p\n",
	})
	rep, err := Reproduce(ctx, golang.Runner{}, f.Dir, []string{"example.com/p.TestNilMap", "example.com/p.TestFine"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 2 {
		t.Fatalf("evidence = %+v", rep.Tests)
	}
	nilMap, fine := rep.Tests[0], rep.Tests[1]
	if nilMap.Runs != 3 || nilMap.Failures != 3 || nilMap.Verdict() != VerdictReliable {
		t.Errorf("TestNilMap = %+v, want 3/3 reliable", nilMap)
	}
	if fine.Runs != 3 || fine.Failures != 0 || fine.Verdict() != VerdictPassing {
		t.Errorf("TestFine = %+v, want 0/3 passing", fine)
	}
	// One reliable test and one passing are not one verdict.
	if rep.Flakiness.Verdict != VerdictFlaky || rep.Flakiness.Runs != 6 || rep.Flakiness.Failures != 3 {
		t.Errorf("flakiness = %+v", rep.Flakiness)
	}
	// Three processes for the panicking test, one for the other.
	if rep.Invocations != 4 {
		t.Errorf("Invocations = %d, want 4", rep.Invocations)
	}
}

func TestReproduceTestThatDoesNotBuild(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	f.Commit("broken", map[string]string{
		"go.mod":    "module example.com/p\n\ngo 1.22\n",
		"p.go":      "package p\n\nfunc F() int { return missing }\n",
		"p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n",
	})
	_, err := Reproduce(ctx, golang.Runner{}, f.Dir, []string{"example.com/p.TestF"}, 5)
	var nr *NotRunError
	if !errors.As(err, &nr) || nr.Test != "example.com/p.TestF" {
		t.Fatalf("err = %v, want a NotRunError", err)
	}
	if want := "package example.com/p does not build: undefined: missing"; nr.Reason != want {
		t.Errorf("reason = %q, want %q", nr.Reason, want)
	}
}
