package offline

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
)

// The blame diff is read from get_diff_details' Commit; the part before a
// line that cannot be read is kept, and the files are known by their new
// names. The observation's text is not read.
func TestObserveDiffDetails(t *testing.T) {
	gone := "diff --git a/old.go b/old.go\ndeleted file mode 100644\n--- a/old.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package old\n"
	for _, tc := range []struct {
		name string
		obs  tools.Observation
		want []string // the files' new names
	}{
		{"a diff", diffShown(sampleDiff), []string{"stats/window.go", "stats/window_test.go"}},
		{"a malformed hunk header", diffShown(sampleDiff + "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3\n"),
			[]string{"stats/window.go", "stats/window_test.go", "x.go"}},
		{"a deletion", diffShown(gone), []string{""}},
		{"text alone", tools.Observation{Content: sampleDiff}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := observeOne(t, tools.GetDiffDetails, tools.GetDiffDetailsArgs{}, tc.obs)
			var got []string
			for _, d := range s.diffs {
				got = append(got, d.NewPath)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("files %q, want %q", got, tc.want)
			}
			if len(s.diffs) > 0 && s.diffs[0].NewPath == "stats/window.go" && len(s.diffs[0].Hunks) != 2 {
				t.Errorf("hunks of stats/window.go = %+v", s.diffs[0].Hunks)
			}
			if p, ok := s.resolve("old.go"); ok {
				t.Errorf("the deleted file resolves to %q", p)
			}
		})
	}
}

// The lines a listing shows are what the policy knows of the file, no more:
// the file is as long as the listing says, the lines it did not show
// unknown. The observation's text is not read.
func TestObserveListing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obs     tools.Observation
		want    map[int]string // the known lines
		wantLen int
	}{
		{"lines of a longer file", tools.Observation{
			Content: "stats/window.go (30 lines), lines 4-6:\n     4\tfunc Sum(xs []int) int {\n     5\t\n     6\t\tt := 0 // 7: not a number\n",
			Listing: &tools.ListingResult{Path: "stats/window.go", Total: 30, Lines: []tools.Line{
				{N: 4, Text: "func Sum(xs []int) int {"}, {N: 5, Text: ""}, {N: 6, Text: "\tt := 0 // 7: not a number"}}},
		}, map[int]string{4: "func Sum(xs []int) int {", 5: "", 6: "\tt := 0 // 7: not a number"}, 30},
		{"line ends with a carriage return", tools.Observation{
			Content: "stats/window.go (2 lines), lines 1-2:\n     1\tpackage stats\r\n     2\t\r\n",
			Listing: &tools.ListingResult{Path: "stats/window.go", Total: 2, Lines: []tools.Line{{N: 1, Text: "package stats\r"}, {N: 2, Text: "\r"}}},
		}, map[int]string{1: "package stats", 2: ""}, 2},
		{"text alone", tools.Observation{
			Content: "stats/window.go (2 lines), lines 1-2:\n     1\tpackage stats\n     2\t\n",
		}, map[int]string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := observeOne(t, tools.ReadFile, tools.ReadFileArgs{Path: "stats/window.go"}, tc.obs)
			m := s.models["stats/window.go"]
			if m == nil || len(m.lines) != tc.wantLen {
				t.Fatalf("model %+v, want %d lines", m, tc.wantLen)
			}
			for n := 1; n <= tc.wantLen; n++ {
				text, ok := m.line(n)
				if want, known := tc.want[n]; ok != known || text != want {
					t.Errorf("line %d = %q (known %v), want %q (known %v)", n, text, ok, want, known)
				}
			}
		})
	}
}

// A read_file listing cut short (the harness shows 250 lines at most) must
// not pass for the whole file.
func TestTruncatedListingIsIncomplete(t *testing.T) {
	var b strings.Builder
	b.WriteString("big.go (400 lines), lines 1-250:\n")
	listing := &tools.ListingResult{Path: "big.go", Total: 400}
	for i := 1; i <= 250; i++ {
		fmt.Fprintf(&b, "%6d\tvar x%d = %d\n", i, i, i)
		listing.Lines = append(listing.Lines, tools.Line{N: i, Text: fmt.Sprintf("var x%d = %d", i, i)})
	}
	b.WriteString("[Shown: lines 1-250 of 400. Call read_file with start_line=251 to read on.]\n")
	s := observeOne(t, tools.ReadFile, tools.ReadFileArgs{Path: "big.go"}, tools.Observation{Content: b.String(), Listing: listing})
	m := s.models["big.go"]
	if m == nil || m.complete() || len(m.lines) != 400 {
		t.Fatalf("model: complete=%v lines=%d", m != nil && m.complete(), len(m.lines))
	}
	if l, ok := m.line(250); !ok || l != "var x250 = 250" {
		t.Errorf("line 250 = %q, %v", l, ok)
	}
	if _, ok := m.line(251); ok {
		t.Errorf("line 251 is known")
	}
}

// find_file's Go files are the paths the policy may resolve frames to.
func TestObserveFindFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pattern string
		obs     tools.Observation
		want    string
	}{
		{"two files", "words_test.go", tools.Observation{
			Content: "2 files match \"words_test.go\":\nwords/words_test.go\nold/words_test.go\n",
			Find:    &tools.FindResult{Files: []string{"words/words_test.go", "old/words_test.go"}},
		}, "[words/words_test.go old/words_test.go]"},
		{"no match", "gone.go", tools.Observation{Content: "No file matches \"gone.go\".", Find: &tools.FindResult{}}, "[]"},
		{"Go files only", "words", tools.Observation{
			Content: "2 files match \"words\":\nwords/words.go\nwords/README.md\n",
			Find:    &tools.FindResult{Files: []string{"words/words.go", "words/README.md"}},
		}, "[words/words.go]"},
		{"text alone", "words_test.go", tools.Observation{Content: "1 file match \"words_test.go\":\nwords/words_test.go\n"}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := observeOne(t, tools.FindFile, tools.FindFileArgs{Pattern: tc.pattern}, tc.obs)
			if got := fmt.Sprint(s.found[tc.pattern]); got != tc.want {
				t.Errorf("found = %s, want %s", got, tc.want)
			}
		})
	}
}

// A symbol search places a name where the symbols it found are declared,
// not where the code it shows mentions other places; a search that failed
// places it nowhere, whatever names it suggests.
func TestObserveSearchMethod(t *testing.T) {
	mean := tools.Observation{
		Content: "1 match for the function or method named \"Mean\":\n\nstats/stats.go:4-13 (func Mean)\n" +
			"     4\tfunc Mean(xs []int) float64 {\n     5\t\treturn other(xs) // see util.go:9\n",
		Symbols: &tools.SymbolsResult{Symbols: []codeindex.Symbol{{Name: "Mean", Kind: "func", File: "stats/stats.go", Line: 4, EndLine: 13}}},
	}
	miss := tools.Observation{
		Content: "No function or method named \"Meen\". Similar: Mean (stats/stats_test.go:9), Median (stats/median.go:3)",
		IsError: true,
	}
	for _, tc := range []struct {
		name, sought string
		obs          tools.Observation
		want         string
	}{
		{"found", "Mean", mean, "[{stats/stats.go 4}]"},
		{"not found", "Meen", miss, "[]"},
		{"text alone", "Mean", tools.Observation{Content: mean.Content}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := observeOne(t, tools.SearchMethod, tools.SearchMethodArgs{Name: tc.sought}, tc.obs)
			if got := fmt.Sprint(s.methods[tc.sought]); got != tc.want {
				t.Errorf("places of %s = %s, want %s", tc.sought, got, tc.want)
			}
		})
	}
}

// The policy reads observations by their structured parts: the text of one
// is only ever quoted to people, by its first line, never read for what it
// says.
func TestObservationTextIsOnlyQuoted(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		read++
		quoted := map[ast.Expr]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "firstLine" && len(call.Args) == 1 {
					quoted[call.Args[0]] = true
				}
			}
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Content" && !quoted[sel] {
				t.Errorf("%s: an observation's text is read", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if read == 0 {
		t.Fatal("no source file read")
	}
}

// The policy learns from a step by its tool's kind, as the episode's tools
// say, not by the tool's name: a tool it has never heard of that lists a
// file's lines teaches it those lines; a name the episode does not offer
// teaches it nothing.
func TestObserveByKind(t *testing.T) {
	ep := &harness.Episode{Task: task.Task{ID: "t"}, MaxSteps: 40,
		Tools: append(tools.Specs(tools.All(), nil), tools.Spec{Name: "show_lines", Kind: tools.KindListing})}
	listing := func(path string) tools.Observation {
		return tools.Observation{Content: path + "\n     1\tpackage x\n", Listing: &tools.ListingResult{Path: path, Total: 1, Lines: []tools.Line{{N: 1, Text: "package x"}}}}
	}
	s := newState(New(nil, testDrivers()), ep)
	for i, name := range []string{"show_lines", "peek_lines"} {
		path := name + ".go"
		s.observe(harness.Step{N: i + 1, Action: harness.NewAction(name, "", map[string]string{"path": path}), Observation: listing(path)}, ep.Kind(name))
	}
	if m := s.models["show_lines.go"]; m == nil || !m.complete() {
		t.Errorf("show_lines taught nothing: %+v", m)
	}
	if m := s.models["peek_lines.go"]; m != nil {
		t.Errorf("peek_lines, which the episode does not offer, taught %+v", m)
	}
}
