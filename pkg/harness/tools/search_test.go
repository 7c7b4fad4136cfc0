package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
)

func TestSearchCode(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	// The file of the stack frames ranks first.
	obs := do(t, s, SearchCode, SearchCodeArgs{Query: "Add("})
	wantContent(t, obs, false, "in 2 files for \"Add(\" (literal)",
		"calc/calc_test.go:6: \tif got := Add(2, 3); got != 5 {", "calc/calc.go:9: func Add(a, b int) int {")
	if strings.Index(obs.Content, "calc/calc_test.go:") > strings.Index(obs.Content, "calc/calc.go:") {
		t.Errorf("the file named by the stack frames is not first:\n%s", obs.Content)
	}
	if obs.Search == nil || len(obs.Search.Hits) != 5 || obs.Search.Hits[1] != (SearchHit{"calc/calc_test.go", 6, "\tif got := Add(2, 3); got != 5 {"}) ||
		obs.Search.Hits[3] != (SearchHit{"calc/calc.go", 9, "func Add(a, b int) int {"}) {
		t.Errorf("Search = %+v", obs.Search)
	}
	// Without frames, non-test files rank first.
	s.t.Failures[0].Frames = nil
	obs = do(t, s, SearchCode, SearchCodeArgs{Query: "Add("})
	if strings.Index(obs.Content, "calc/calc_test.go:") < strings.Index(obs.Content, "calc/calc.go:") {
		t.Errorf("a test file ranks before a non-test file:\n%s", obs.Content)
	}

	obs = do(t, s, SearchCode, SearchCodeArgs{Query: `^func \w+\(a, b int\)`, Regex: true})
	wantContent(t, obs, false, "2 matches in 1 file", "calc/calc.go:9:", "calc/calc.go:17:")
	wantCalls(t, s, []call{
		{SearchCode, SearchCodeArgs{Query: "(", Regex: true}, true, []string{"not valid"}},
		{SearchCode, SearchCodeArgs{Query: "SHOUT"}, false, []string{"ignoring case", "strs/strs.go:6:"}},
	})
	obs = do(t, s, SearchCode, SearchCodeArgs{Query: "zzz-absent"})
	wantContent(t, obs, false, "No match")
	if obs.Search == nil || len(obs.Search.Hits) != 0 {
		t.Errorf("Search = %+v", obs.Search)
	}

	// Untracked files are searched; results are capped with a count of the rest.
	var many strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&many, "needle %d\n", i)
	}
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"gen/many.txt": many.String(), "gen/few.txt": "needle\n"})
	// A session lists the files once; a new one sees them.
	s = newTestSession(t, f, nil)
	obs = do(t, s, SearchCode, SearchCodeArgs{Query: "needle"})
	wantContent(t, obs, false, "151 matches in 2 files", "gen/few.txt:1: needle", "more matches not shown")
	if n := strings.Count(obs.Content, "gen/many.txt:"); n > searchCap+1 {
		t.Errorf("%d lines of one file shown, cap %d", n, searchCap)
	}
	// The hits are those shown.
	if obs.Search == nil || len(obs.Search.Hits) != strings.Count(obs.Content, ": needle") {
		t.Fatalf("Search has %d hits for %d shown", len(obs.Search.Hits), strings.Count(obs.Content, ": needle"))
	}
	for _, h := range obs.Search.Hits {
		if !strings.Contains(obs.Content, fmt.Sprintf("%s:%d: %s\n", h.File, h.Line, h.Text)) {
			t.Errorf("hit %+v is not shown", h)
		}
	}
}

// A search that finds nothing suggests near matches: "queryAll" finds
// "query.all" and "Query_All".
func TestSearchCodeNearMatches(t *testing.T) {
	f := harnesstest.Calc(t)
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"db/db.go": "package db\n\n// Rows runs the query.\nfunc Rows(q string) string {\n\treturn \"SELECT \" + q + \" -- query.all\"\n}\n\nconst Query_All = 1\n"})
	s := newTestSession(t, f, nil)
	obs := do(t, s, SearchCode, SearchCodeArgs{Query: "queryAll"})
	wantContent(t, obs, false, "near matches: the words query, all", "db/db.go:5:", "db/db.go:8:")
	if got := identWords("HTTPServer_v2.readAll"); strings.Join(got, " ") != "http server v2 read all" {
		t.Errorf("identWords = %q", got)
	}
}

func TestSearchCodeInFile(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, SearchCodeInFile, SearchCodeInFileArgs{Query: "return ", Path: "calc/calc.go"})
	wantContent(t, obs, false, "3 matches for \"return \" in calc/calc.go", "calc/calc.go:10: \treturn a - b", "calc/calc.go:14:", "calc/calc.go:18:")
	if obs.Search == nil || fmt.Sprint(obs.Search.Hits) != "[{calc/calc.go 10 \treturn a - b} {calc/calc.go 14 func (x *Adder) Add(n int) int { return Add(x.Base, n) }} {calc/calc.go 18 \treturn a - b}]" {
		t.Errorf("Search = %+v", obs.Search)
	}
	wantCalls(t, s, []call{
		{SearchCodeInFile, SearchCodeInFileArgs{Query: `^\s+return a`, Regex: true, Path: "calc/calc.go"}, false, []string{"2 matches"}},
		{SearchCodeInFile, SearchCodeInFileArgs{Query: "x", Path: "../etc"}, true, []string{"outside the workspace"}},
		{SearchCodeInFile, SearchCodeInFileArgs{Query: "x", Path: "calc/none.go"}, true, []string{"No file calc/none.go"}},
	})
}

func TestSearchSymbols(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, SearchClass, SearchClassArgs{Name: "Adder"})
	wantContent(t, obs, false, "calc/calc.go:4-6 (struct Adder)", "     4\ttype Adder struct {\n     5\t\tBase int\n", "Methods: Add (calc/calc.go:14)")
	wantContent(t, do(t, s, SearchClass, SearchClassArgs{Name: "Adde"}), true, "No type named \"Adde\"", "Adder (calc/calc.go:4)")

	obs = do(t, s, SearchMethod, SearchMethodArgs{Name: "Add"})
	wantContent(t, obs, false, "2 matches", "calc/calc.go:9-11 (func Add)", "    10\t\treturn a - b\n", "calc/calc.go:14-14 (method Adder.Add)")
	if obs.Symbols == nil || len(obs.Symbols.Symbols) != 2 || obs.Symbols.Symbols[0].Location() != "calc/calc.go:9" ||
		obs.Symbols.Symbols[1].QualifiedName() != "Adder.Add" || obs.Symbols.Symbols[1].EndLine != 14 {
		t.Errorf("Symbols = %+v", obs.Symbols)
	}
	obs = do(t, s, SearchMethod, SearchMethodArgs{Name: "Adder.Add"})
	wantContent(t, obs, false, "1 match", "method Adder.Add")
	wantCalls(t, s, []call{
		{SearchMethod, SearchMethodArgs{Name: "Ad"}, true, []string{"No function or method named \"Ad\"", "Add (calc/calc.go:9)"}},
		{SearchMethodInFile, SearchMethodInFileArgs{Name: "Sub", Path: "calc/calc.go"}, false, []string{"calc/calc.go:17-19 (func Sub)"}},
		{SearchMethodInFile, SearchMethodInFileArgs{Name: "Mul", Path: "calc/calc.go"}, true, []string{"No function or method named \"Mul\" in calc/calc.go", "Sub (calc/calc.go:17)"}},
		{SearchMethodInFile, SearchMethodInFileArgs{Name: "Sub", Path: "../x.go"}, true, []string{"outside the workspace"}},
		{SearchMethodInClass, SearchMethodInClassArgs{Name: "Add", Class: "*Adder"}, false, []string{"1 match", "calc/calc.go:14-14 (method Adder.Add)"}},
		{SearchMethodInClass, SearchMethodInClassArgs{Name: "Sub", Class: "Adder"}, true, []string{"No method \"Sub\" of type \"Adder\"", "Adder.Add (calc/calc.go:14)"}},
		{SearchMethodInClass, SearchMethodInClassArgs{Name: "Sub"}, true, []string{"class"}},
	})

	// The index follows edits.
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n=======\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, false, "Edited calc/calc.go")
	wantContent(t, do(t, s, SearchMethod, SearchMethodArgs{Name: "Mul"}), false, "calc/calc.go:22-22 (func Mul)")
}

// search_method shows a 92-line function whole.
func TestSearchMethodShowsLongFunctionWhole(t *testing.T) {
	f := harnesstest.Calc(t)
	var body strings.Builder
	body.WriteString("package calc\n\n// Long does many small things.\nfunc Long(x int) int {\n")
	for i := 0; i < 89; i++ {
		fmt.Fprintf(&body, "\tx += %d\n", i)
	}
	body.WriteString("\treturn x\n}\n")
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"calc/long.go": body.String()})
	s := newTestSession(t, f, nil)
	obs := do(t, s, SearchMethod, SearchMethodArgs{Name: "Long"})
	wantContent(t, obs, false, "calc/long.go:4-95 (func Long)", "    94\t\treturn x\n", "    95\t}\n")
	if strings.Contains(obs.Content, "not shown") {
		t.Errorf("a 92-line function is cut:\n%s", obs.Content)
	}
	// Beyond what an observation holds, it is cut with a note.
	body.Reset()
	body.WriteString("package calc\n\n// Huge does too much.\nfunc Huge(x int) int {\n")
	for i := 0; i < 900; i++ {
		fmt.Fprintf(&body, "\tx += %d // step %d of a very long function\n", i, i)
	}
	body.WriteString("\treturn x\n}\n")
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"calc/huge.go": body.String()})
	s.idxStale = true
	obs = do(t, s, SearchMethod, SearchMethodArgs{Name: "Huge"})
	wantContent(t, obs, false, "calc/huge.go:4-906 (func Huge)", "more lines, to line 906, not shown", "use read_file with start_line=")
	if len(obs.Content) > s.env.OutputLimit {
		t.Errorf("the observation is %d characters, over the limit", len(obs.Content))
	}
}
