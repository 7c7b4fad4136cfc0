package validators

import (
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// Packages around calc: sheet imports calc, summary imports sheet (two hops),
// audit's tests alone import calc, and notes imports nothing of the module.
var dependentsOfCalc = map[string]string{
	"sheet/sheet.go":          "package sheet\n\nimport \"example.com/calc/calc\"\n\n// Double is 2*x through calc.\nfunc Double(x int) int { return calc.Mul(2, x) }\n",
	"sheet/sheet_test.go":     "package sheet\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(4) != 8 {\n\t\tt.Fatalf(\"Double(4) = %d\", Double(4))\n\t}\n}\n",
	"summary/summary.go":      "package summary\n\nimport \"example.com/calc/sheet\"\n\n// Quad is 4*x.\nfunc Quad(x int) int { return sheet.Double(sheet.Double(x)) }\n",
	"summary/summary_test.go": "package summary\n\nimport \"testing\"\n\nfunc TestQuad(t *testing.T) {\n\tif Quad(3) != 12 {\n\t\tt.Fatalf(\"Quad(3) = %d\", Quad(3))\n\t}\n}\n",
	"audit/audit.go":          "package audit\n\n// Name is the package's name.\nconst Name = \"audit\"\n",
	"audit/audit_test.go":     "package audit_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/calc\"\n)\n\nfunc TestMulAudit(t *testing.T) {\n\tif calc.Mul(3, 4) != 12 {\n\t\tt.Fatal(\"Mul(3, 4) != 12\")\n\t}\n}\n",
	"notes/notes.go":          "package notes\n\n// N is a note.\nconst N = 1\n",
	"notes/notes_test.go":     "package notes\n\nimport \"testing\"\n\nfunc TestN(t *testing.T) {}\n",
}

func TestRegressionInDependentPackage(t *testing.T) {
	t.Parallel()
	// Add mended, and Mul broken beyond the calc package's own test
	// (Mul(2, 3)): only the dependents see it.
	brokeMul := strings.Replace(fixed, "return x * y", "if y > 3 {\n\t\treturn x * y * 2\n\t}\n\treturn x * y", 1)
	t.Run("breaks a dependent's test", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, dependentsOfCalc)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": brokeMul}))
		want(t, gates, GateOracle, task.GatePass)
		want(t, gates, GateRegression, task.GateFail, "go test ./calc and 3 dependent package(s): ./audit ./sheet ./summary",
			"3 new failure(s)", "example.com/calc/audit.TestMulAudit: Mul(3, 4) != 12", "example.com/calc/sheet.TestDouble: ", "example.com/calc/summary.TestQuad")
	})
	t.Run("good patch runs the dependents", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, dependentsOfCalc)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed}))
		want(t, gates, GateRegression, task.GatePass, "go test ./calc and 3 dependent package(s): ./audit ./sheet ./summary: 5 tests passed")
		if strings.Contains(gates[GateRegression].Detail, "notes") {
			t.Errorf("an unrelated package ran: %s", gates[GateRegression].Detail)
		}
	})
	t.Run("budget spent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, dependentsOfCalc)
		gates := check(t, Config{RegressionBudget: time.Nanosecond}, f.input(t, map[string]string{"calc/calc.go": brokeMul}))
		want(t, gates, GateRegression, task.GatePass, "go test ./calc: 2 tests passed",
			"time budget of 1ns spent: the tests of 3 dependent package(s) did not run: ./audit ./sheet ./summary")
	})
	t.Run("dependent failing at base is not blamed", func(t *testing.T) {
		t.Parallel()
		extra := map[string]string{}
		for k, v := range dependentsOfCalc {
			extra[k] = v
		}
		extra["sheet/old_test.go"] = "package sheet\n\nimport \"testing\"\n\nfunc TestOldSheet(t *testing.T) {\n\tt.Fatal(\"never worked\")\n}\n"
		f := newFixture(t, extra)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed}))
		want(t, gates, GateRegression, task.GatePass, "no new failure", "failing at base "+task.Short(f.base)+" too, not blamed: example.com/calc/sheet.TestOldSheet")
	})
}
