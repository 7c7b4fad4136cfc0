package validators

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// A table-driven test whose cases live in a package-level variable.
const parseTest = `package calc

import "testing"

var addCases = []struct {
	x, y, want int
}{
	{1, 2, 3},
	{40, 2, 42},
	{-7, -8, -15},
}

func TestAdd(t *testing.T) {
	for _, c := range addCases {
		if got := Add(c.x, c.y); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.x, c.y, got, c.want)
		}
	}
	if Label(42) != "forty-two" {
		t.Error("Label(42)")
	}
}

func TestMul(t *testing.T) {
	if Mul(6, 7) != 4242 {
		t.Skip("not this one")
	}
}
`

const labelGo = `package calc

import "strconv"

// Label names a number.
func Label(n int) string {
	if n == 7 {
		return "seven"
	}
	return strconv.Itoa(n)
}

// Big says whether n is large.
func Big(n int) bool { return n > 1000 || n < -15 }
`

func TestIntegritySpecialCasing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{
			name: "condition on the table's inputs",
			change: map[string]string{"calc/calc.go": strings.Replace(fixed, "func Add(x, y int) int {\n",
				"func Add(x, y int) int {\n\tif x == 40 && y == 2 {\n\t\treturn 42\n\t}\n", 1)},
			detail: []string{"calc/calc.go:5: special-cases a value of the failing test: x == 40 compares with 40, which TestAdd uses at calc/calc_test.go:9"},
		},
		{
			name:   "switch on an expected value",
			change: map[string]string{"calc/label.go": strings.Replace(labelGo, "\tif n == 7 {", "\tswitch n {\n\tcase 42:\n\t\treturn \"forty-two\"\n\t}\n\tif n == 7 {", 1)},
			detail: []string{"calc/label.go:8: special-cases a value of the failing test: case 42 compares with 42, which TestAdd uses at calc/calc_test.go:19"},
		},
		{
			name: "negative input",
			change: map[string]string{"calc/calc.go": strings.Replace(fixed, "func Add(x, y int) int {\n",
				"func Add(x, y int) int {\n\tif y != -8 {\n\t\treturn x + y\n\t}\n", 1)},
			detail: []string{"y != -8 compares with -8"},
		},
		{
			name:   "comparison with a value the code already knew",
			change: map[string]string{"calc/calc.go": fixed, "calc/label.go": strings.Replace(labelGo, "\tif n == 7 {", "\tif n == -15 {\n\t\treturn \"minus fifteen\"\n\t}\n\tif n == 7 {", 1)},
		},
		{
			name: "detects go test",
			change: map[string]string{"calc/calc.go": strings.Replace(fixed, "func Add(x, y int) int {\n",
				"func Add(x, y int) int {\n\tif testing.Testing() {\n\t\treturn 3\n\t}\n", 1)},
			detail: []string{"calc/calc.go:5: detects that it runs under test by calling testing.Testing: if testing.Testing() {"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{"calc/calc_test.go": parseTest, "calc/label.go": labelGo})
			in := f.input(t, c.change)
			g, err := New(Config{}, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}

func TestIntegrityTestHelpersAndSize(t *testing.T) {
	t.Parallel()
	helper := "package calctest\n\nimport \"testing\"\n\n// Equal fails t when got != want.\nfunc Equal(t *testing.T, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n"
	golden := "3\n"
	for _, c := range []struct {
		name   string
		cfg    Config
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{
			name:   "weakened helper",
			cfg:    Config{},
			change: map[string]string{"calc/calc.go": fixed, "calctest/equal.go": strings.Replace(helper, "\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n", "", 1)},
			detail: []string{"calctest/equal.go:8: removes a check from a test helper: if got != want {", "calctest/equal.go:9: removes a check from a test helper: t.Fatalf("},
		},
		{
			name:   "helper edited without weakening",
			cfg:    Config{},
			change: map[string]string{"calc/calc.go": fixed, "calctest/equal.go": strings.Replace(helper, "// Equal fails", "// Equal stops", 1)},
		},
		{
			name:   "expected output changed",
			cfg:    Config{AllowTestEdits: true},
			change: map[string]string{"calc/calc.go": fixed, "calc/testdata/add.golden": "-1\n"},
			detail: []string{"calc/testdata/add.golden: changes test data the tests compare with (expected output)"},
		},
		{
			name:   "too many lines",
			cfg:    Config{MaxPatchLines: 1},
			change: map[string]string{"calc/calc.go": fixed},
			detail: []string{"the patch changes 2 lines, more than the limit of 1"},
		},
		{
			name:   "too many files",
			cfg:    Config{MaxPatchFiles: 1, AllowTestEdits: true},
			change: map[string]string{"calc/calc.go": fixed, "calc/extra_test.go": "package calc\n"},
			detail: []string{"the patch changes 2 files, more than the limit of 1"},
		},
		{
			name:   "within the limits",
			cfg:    Config{MaxPatchLines: 2, MaxPatchFiles: 1},
			change: map[string]string{"calc/calc.go": fixed},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{"calctest/equal.go": helper, "calc/testdata/add.golden": golden})
			in := f.input(t, c.change)
			g, err := New(c.cfg, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}

// wantIntegrity checks the integrity verdict: a pass when detail is empty,
// else a failure that mentions each of detail.
func wantIntegrity(t *testing.T, g task.Gate, detail []string) {
	t.Helper()
	if len(detail) == 0 {
		if g.Verdict != task.GatePass {
			t.Errorf("integrity = %s: %s; want a pass", g.Verdict, g.Detail)
		}
		return
	}
	if g.Verdict != task.GateFail {
		t.Errorf("integrity = %s: %s; want a failure", g.Verdict, g.Detail)
	}
	for _, d := range detail {
		if !strings.Contains(g.Detail, d) {
			t.Errorf("detail does not mention %q:\n%s", d, g.Detail)
		}
	}
}
