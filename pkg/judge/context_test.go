package judge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
)

// A test's source longer than the prompt quotes is cut at a line's end and
// marked there; the next test's source is quoted on its own, whole.
func TestWithContextCutsALongTestAtALineBoundary(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	long.WriteString("func TestLong(t *testing.T) {\n")
	for i := range 400 {
		fmt.Fprintf(&long, "\tif Pad(%d) != (%d < 10) {\n\t\tt.Errorf(\"Pad(%d) is wrong\")\n\t}\n", i, i, i)
	}
	long.WriteString("}\n")
	src := "package m\n\nimport \"testing\"\n\n" + long.String() + "\nfunc TestNext(t *testing.T) {\n\tif !Pad(9) {\n\t\tt.Fatal(9)\n\t}\n}\n"
	writeTree(t, dir, map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"m/m.go":      "package m\n\nfunc Pad(n int) bool {\n\treturn n < 10\n}\n",
		"m/m_test.go": src,
	})
	in := judge.WithContext(dir, golang.Driver{}, judge.Input{Task: task.Task{Failures: []task.Failure{
		{Package: "example.com/m/m", Test: "TestLong"}, {Package: "example.com/m/m", Test: "TestNext"},
	}}})
	if len(in.Tests) != 2 {
		t.Fatalf("tests = %+v", in.Tests)
	}
	text := in.Tests[0].Text
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "[… ") || !strings.Contains(last, "more lines of TestLong not shown") || len(text) > 6200 {
		t.Fatalf("the cut is not marked (last line %q, %d bytes)", last, len(text))
	}
	whole := map[string]bool{}
	for _, l := range strings.Split(src, "\n") {
		whole[l] = true
	}
	for _, l := range lines[:len(lines)-1] {
		if !whole[l] {
			t.Fatalf("the quote holds a line cut short: %q", l)
		}
	}
	if strings.Contains(text, "TestNext") {
		t.Error("the long test's quote runs into the next test")
	}
	if next := in.Tests[1].Text; !strings.HasPrefix(next, "func TestNext(") || !strings.HasSuffix(next, "}") {
		t.Errorf("the next test is not quoted whole: %q", next)
	}
}
