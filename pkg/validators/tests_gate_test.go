package validators

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// A patch that mends Add and breaks Mul: the regression gate names the new
// failure and says what it said.
func TestRegressionNamesEachNewFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	broken := strings.Replace(fixed, "return x * y", "return x + y", 1)
	gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": broken}))
	want(t, gates, GateOracle, task.GatePass)
	want(t, gates, GateRegression, task.GateFail,
		"1 new failure(s)", "example.com/calc/calc.TestMul: Mul(2, 3) = 5, want 6 (at calc/calc_test.go:13)")
}

// A package whose tests print far more than any output cap, all passing: a
// correct patch passes the regression gate, with every test counted.
func TestRegressionReadsLargeOutputWhole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"calc/noisy_test.go": `package calc

import (
	"fmt"
	"strings"
	"testing"
)

func TestNoisy(t *testing.T) {
	for i := 0; i < 700; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) { t.Log(strings.Repeat("y", 600)) })
	}
}
`})
	gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed}))
	want(t, gates, GateRegression, task.GatePass, "go test ./calc: 703 tests passed")
}
