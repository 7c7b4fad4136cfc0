package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// A task whose failure is a package that does not build (triage's build
// failures): its "failing test" is the package, which the oracle runs whole
// (the package built with its tests, every test passing) and the regression
// gate covers.
func TestBuildFailureTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	write(t, f.repo.Dir, map[string]string{"calc/calc.go": strings.Replace(calcGood, "return x + y", "return round(x + y)", 1)})
	base, err := f.repo.CommitAll(ctx, "calc: round sums")
	if err != nil {
		t.Fatal(err)
	}
	blame, err := f.repo.Show(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	f.base, f.blame = base, blame
	buildTask := func(in Input) Input {
		in.Task.Failures = []task.Failure{{Package: "example.com/calc/calc", Message: "undefined: round", Frames: []string{"calc/calc.go:5"}}}
		return in
	}

	gates := check(t, Config{}, buildTask(f.input(t, map[string]string{"calc/calc.go": calcGood})))
	want(t, gates, GateOracle, task.GatePass, "3/3 runs passed", "example.com/calc/calc")
	want(t, gates, GateRegression, task.GatePass)

	// A patch that builds but breaks a test of the package is no repair.
	gates = check(t, Config{}, buildTask(f.input(t, map[string]string{"calc/calc.go": strings.Replace(calcGood, "return x * y", "return x + y", 1)})))
	want(t, gates, GateOracle, task.GateFail, "example.com/calc/calc.TestMul failed")
}
