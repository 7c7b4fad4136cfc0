package golang

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/protected"
)

// writeModule writes a module of files into a new directory.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/calc\n\ngo 1.22\n"
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The packages whose tests depend on calc: sheet imports calc, summary
// imports sheet (two hops), audit's tests alone import calc, and notes
// imports nothing of the module.
func TestDependents(t *testing.T) {
	t.Parallel()
	dir := writeModule(t, map[string]string{
		"calc/calc.go":            "package calc\n\n// Mul is x*y.\nfunc Mul(x, y int) int { return x * y }\n",
		"calc/calc_test.go":       "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {}\n",
		"sheet/sheet.go":          "package sheet\n\nimport \"example.com/calc/calc\"\n\n// Double is 2*x.\nfunc Double(x int) int { return calc.Mul(2, x) }\n",
		"sheet/sheet_test.go":     "package sheet\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {}\n",
		"summary/summary.go":      "package summary\n\nimport \"example.com/calc/sheet\"\n\n// Quad is 4*x.\nfunc Quad(x int) int { return sheet.Double(sheet.Double(x)) }\n",
		"summary/summary_test.go": "package summary\n\nimport \"testing\"\n\nfunc TestQuad(t *testing.T) {}\n",
		"audit/audit.go":          "package audit\n\n// Name is the package's name.\nconst Name = \"audit\"\n",
		"audit/audit_test.go":     "package audit_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/calc\"\n)\n\nfunc TestMulAudit(t *testing.T) { _ = calc.Mul(3, 4) }\n",
		"notes/notes.go":          "package notes\n\n// N is a note.\nconst N = 1\n",
		"notes/notes_test.go":     "package notes\n\nimport \"testing\"\n\nfunc TestN(t *testing.T) {}\n",
	})
	deps, err := dependents(context.Background(), dir, []string{"./calc"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range deps {
		got = append(got, d.Dir+"@"+string(rune('0'+d.Hops)))
	}
	if want := "./audit@1,./sheet@1,./summary@2"; strings.Join(got, ",") != want {
		t.Errorf("dependents = %s, want %s", strings.Join(got, ","), want)
	}
}

// A failing table-driven test's literals: its body's and its table's, not
// a neighbour's, and not the values too common to tell anything.
func TestFailingTestLiterals(t *testing.T) {
	t.Parallel()
	dir := writeModule(t, map[string]string{
		"calc/calc_test.go": `package calc

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
`,
	})
	lits := failingTestLiterals(dir, []string{"example.com/calc/calc.TestAdd"})
	want := map[string]bool{"3": true, "40": true, "42": true, "-7": true, "-8": true, "-15": true, `"forty-two"`: true, `"Add(%d, %d) = %d, want %d"`: true, `"Label(42)"`: true}
	for v, l := range lits {
		g := gaterules.ShowLiteral(v)
		if !want[g] {
			t.Errorf("unexpected literal %s (1, 2 and TestMul's are not TestAdd's distinctive values)", g)
		}
		if !strings.HasPrefix(l.Where, "calc/calc_test.go:") || l.Test != "TestAdd" {
			t.Errorf("%s: %+v", g, l)
		}
		delete(want, g)
	}
	for w := range want {
		t.Errorf("literal %s missing", w)
	}
}

// Go's protected files: the module files, named by a policy only by their
// own names; code named like a build file stays code.
func TestProtectedFiles(t *testing.T) {
	t.Parallel()
	kinds := append(Driver{}.ProtectedFiles(), protected.Common...)
	for _, c := range []struct {
		glob, path string
		named      bool
	}{
		{"go.mod", "go.mod", true},
		{"**/go.*", "go.mod", false},
		{"**", "go.sum", false},
		{"magefiles/**", "magefiles/build.go", true},
		{"*.yml", ".golangci.yml", false},
	} {
		pp, ok := protected.Classify(kinds, c.path, Driver{}.IsSource)
		if !ok {
			t.Errorf("%s is not protected", c.path)
			continue
		}
		if got := pp.NamedBy([]string{c.glob}, c.path); got != c.named {
			t.Errorf("policy %q names %s = %v, want %v", c.glob, c.path, got, c.named)
		}
	}
	for _, p := range []string{"calc/calc.go", "makefile.go", "gomod.go", "dockerfile.go", "cmd/githooks/main.go"} {
		if pp, ok := protected.Classify(kinds, p, Driver{}.IsSource); ok {
			t.Errorf("%s is protected as %s", p, pp.Kind.What)
		}
	}
}
