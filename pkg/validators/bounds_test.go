package validators

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// deepLine is the line a hostile patch added: three million bytes, a
// number in parentheses nested a million and a half deep.
func deepLine(prefix string) string {
	const n = 1_500_000
	return prefix + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n"
}

// lineAfter is the number of the line appended to src.
func lineAfter(src string) int { return strings.Count(src, "\n") + 1 }

// TestPatchOutOfBoundsIsRefusedUnread checks the three-megabyte line of
// nested parentheses in each language: integrity refuses it naming the
// file and line, no other gate runs, and checking it allocates less than
// the patch's own size (the parsers that read it before took hundreds of
// megabytes). Not parallel: it measures the process's allocations.
func TestPatchOutOfBoundsIsRefusedUnread(t *testing.T) {
	pyFixed := strings.Replace(pyCalc, "return x - y", "return x + y", 1)
	for _, c := range []struct {
		name  string
		input func(t *testing.T) Input
		where string
	}{
		{
			name: "go",
			input: func(t *testing.T) Input {
				return newFixture(t, nil).input(t, map[string]string{"calc/calc.go": fixed + deepLine("var deep = ")})
			},
			where: fmt.Sprintf("calc/calc.go:%d: ", lineAfter(fixed)),
		},
		{
			name: "python",
			input: func(t *testing.T) Input {
				return newPyFixture(t).pyInput(t, map[string]string{"calc/calc.py": pyFixed + deepLine("DEEP = ")})
			},
			where: fmt.Sprintf("calc/calc.py:%d: ", lineAfter(pyFixed)),
		},
		{
			name: "typescript",
			input: func(t *testing.T) Input {
				return newNodeFixture(t).nodeInput(t, map[string]string{"src/price.ts": tsPrice + deepLine("export const DEEP = ")})
			},
			where: fmt.Sprintf("src/price.ts:%d: ", lineAfter(tsPrice)),
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			v := New(Config{AllowTestEdits: true}, nil)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			list, err := v.Check(t.Context(), in)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			gates := map[string]task.Gate{}
			for _, g := range list {
				gates[g.Name] = g
			}
			want(t, gates, GateIntegrity, task.GateFail, "the patch is refused unread",
				c.where+"adds a line of 3000", "bytes, more than the 8192 an added line may have",
				c.where+"adds brackets nested more than 256 deep")
			wantSkipped(t, gates, GateIntegrity, GateRevert, GateStatic, GateOracle, GateRegression)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("checking a patch of %d bytes allocated %d bytes", len(in.Patch), alloc)
			if alloc > uint64(len(in.Patch)) {
				t.Errorf("checking a patch of %d bytes allocated %d bytes: something read it past the diff", len(in.Patch), alloc)
			}
		})
	}
}

func TestAddedLineBounds(t *testing.T) {
	t.Parallel()
	at := lineAfter(fixed)
	nested := func(n int) string {
		return "var deep = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n"
	}
	long := "// " + strings.Repeat("x", MaxAddedLineBytes-3) + "\n"
	for _, c := range []struct {
		name   string
		base   map[string]string
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{name: "a line as long as may be", change: map[string]string{"calc/calc.go": fixed + long}},
		{
			name:   "a byte longer",
			change: map[string]string{"calc/calc.go": fixed + "/" + long},
			detail: []string{fmt.Sprintf("calc/calc.go:%d: adds a line of 8193 bytes, more than the 8192 an added line may have", at)},
		},
		{name: "brackets as deep as may be", change: map[string]string{"calc/calc.go": fixed + nested(MaxAddedNesting)}},
		{
			name:   "one deeper",
			change: map[string]string{"calc/calc.go": fixed + nested(MaxAddedNesting+1)},
			detail: []string{fmt.Sprintf("calc/calc.go:%d: adds brackets nested more than 256 deep", at)},
		},
		{
			// Each line opens one: the depth passes the bound on the
			// 257th, in the second hunk.
			name: "nesting over lines and hunks",
			change: map[string]string{"calc/calc.go": strings.Replace(fixed, "// Add returns", strings.Repeat("f(\n", 200)+"// Add returns", 1) +
				strings.Repeat("g[\n", 100)},
			detail: []string{fmt.Sprintf("calc/calc.go:%d: adds brackets nested more than 256 deep", at+200+56)},
		},
		{
			// Closers with nothing open lend no credit to the openers
			// that follow them.
			name:   "closers first",
			change: map[string]string{"calc/calc.go": fixed + strings.Repeat("}\n", 300) + nested(MaxAddedNesting+1)},
			detail: []string{fmt.Sprintf("calc/calc.go:%d: adds brackets nested more than 256 deep", at+300)},
		},
		{
			name:   "balanced lines one after another",
			change: map[string]string{"calc/calc.go": fixed + strings.Repeat("var _ = ((((1))))\n", 300)},
		},
		{
			// The repository's own long line is not the patch's.
			name:   "a long line removed",
			base:   map[string]string{"calc/table.go": "package calc\n\nvar table = \"" + strings.Repeat("x", 3*MaxAddedLineBytes) + "\"\n"},
			change: map[string]string{"calc/calc.go": fixed, "calc/table.go": "package calc\n\nvar table = \"x\"\n"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := newFixture(t, c.base).input(t, c.change)
			cand := &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)}
			g, err := New(Config{}, nil).integrity(t.Context(), cand)
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
			if refused := len(c.detail) > 0; cand.refused != refused {
				t.Errorf("refused = %v, want %v", cand.refused, refused)
			}
		})
	}
}
