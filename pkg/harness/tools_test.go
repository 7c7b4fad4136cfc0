package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func do(t *testing.T, s *session, name string, args any) Observation {
	t.Helper()
	obs, err := s.execute(context.Background(), NewAction(name, "", args))
	if err != nil {
		t.Fatalf("%s(%+v): %v", name, args, err)
	}
	return obs
}

func wantContent(t *testing.T, obs Observation, isError bool, parts ...string) {
	t.Helper()
	if obs.IsError != isError {
		t.Errorf("IsError = %v, want %v; content:\n%s", obs.IsError, isError, obs.Content)
	}
	for _, p := range parts {
		if !strings.Contains(obs.Content, p) {
			t.Errorf("content does not contain %q:\n%s", p, obs.Content)
		}
	}
}

func TestGetTaskDetails(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActGetTaskDetails, nil)
	wantContent(t, obs, false,
		"example.com/calc/calc.TestAdd", "Add(2, 3) = -1, want 5", "calc/calc_test.go:7",
		"--- FAIL: TestAdd", "failed 3 of 3 reruns (reliable)", f.bad[:12], `"calc: simplify Add"`)
}

func TestGetDiffDetails(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ActGetDiffDetails, DiffArgs{})
	wantContent(t, obs, false, "commit "+f.bad, "calc: simplify Add", "Share the code of Sub.",
		"Files changed (1):\n  calc/calc.go", "diff --git a/calc/calc.go b/calc/calc.go", "-\treturn a + b", "+\treturn a - b")
	// The diff alone, as shown, without the message around it.
	if c := obs.Commit; c == nil || c.SHA != f.bad || !strings.HasPrefix(c.Diff, "diff --git a/calc/calc.go b/calc/calc.go") ||
		!strings.Contains(c.Diff, "+\treturn a - b") || strings.Contains(c.Diff, "Share the code") || !strings.Contains(obs.Content, c.Diff) {
		t.Errorf("Commit = %+v", obs.Commit)
	}

	obs = do(t, s, ActGetDiffDetails, DiffArgs{Commit: f.good})
	wantContent(t, obs, false, "calc: add and sub", "strs/strs.go")

	obs = do(t, s, ActGetDiffDetails, DiffArgs{Commit: "no-such-rev"})
	wantContent(t, obs, true, `No commit "no-such-rev"`)
}

func TestReadDirectory(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ActReadDirectory, PathArgs{})
	wantContent(t, obs, false, "calc/\nstrs/\nREADME.md\ngo.mod\n")
	if strings.Contains(obs.Content, ".git") {
		t.Errorf("the listing shows .git:\n%s", obs.Content)
	}
	wantContent(t, do(t, s, ActReadDirectory, PathArgs{Path: "calc"}), false, "calc.go\ncalc_test.go\n")
	wantContent(t, do(t, s, ActReadDirectory, PathArgs{Path: "../"}), true, "outside the workspace")
	wantContent(t, do(t, s, ActReadDirectory, PathArgs{Path: "go.mod"}), true, "is a file")
	wantContent(t, do(t, s, ActReadDirectory, PathArgs{Path: "nope"}), true, "Cannot read the directory nope")
}

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ActReadFile, ReadFileArgs{Path: "calc/calc.go"})
	wantContent(t, obs, false, "calc/calc.go (19 lines), lines 1-19:", "     1\tpackage calc\n", "     9\tfunc Add(a, b int) int {\n    10\t\treturn a - b\n")
	if strings.Contains(obs.Content, "read on") {
		t.Errorf("a short file says there is more:\n%s", obs.Content)
	}
	wantListing(t, obs, "calc/calc.go", 19, 1, 19)
	if l := obs.Listing.Lines; l[9] != (Line{10, "\treturn a - b"}) || l[1] != (Line{2, ""}) {
		t.Errorf("lines 2 and 10 = %+v, %+v", l[1], l[9])
	}

	obs = do(t, s, ActReadFile, ReadFileArgs{Path: "calc/calc.go", StartLine: 17, EndLine: 18})
	wantContent(t, obs, false, "lines 17-18:\n    17\tfunc Sub(a, b int) int {\n    18\t\treturn a - b\n")
	if strings.Contains(obs.Content, "    19\t") {
		t.Errorf("the range was not kept:\n%s", obs.Content)
	}
	wantListing(t, obs, "calc/calc.go", 19, 17, 18)

	for _, p := range []string{"../outside.go", "/etc/passwd", ".git/config"} {
		wantContent(t, do(t, s, ActReadFile, ReadFileArgs{Path: p}), true, "is refused", "outside the workspace")
	}
	wantContent(t, do(t, s, ActReadFile, ReadFileArgs{Path: "calc.go"}), true, "No file calc.go.", "Files with that name: calc/calc.go")
	wantContent(t, do(t, s, ActReadFile, ReadFileArgs{Path: "calc"}), true, "is a directory")
	wantContent(t, do(t, s, ActReadFile, ReadFileArgs{Path: "calc/calc.go", StartLine: 99}), true, "past its end")
	wantContent(t, do(t, s, ActReadFile, ReadFileArgs{}), true, "path is required")

	// A long file is cut, and the observation says how to read on.
	var long strings.Builder
	for i := 1; i <= 700; i++ {
		fmt.Fprintf(&long, "l%d\n", i)
	}
	writeFiles(t, f.ws.Dir, map[string]string{"long.txt": long.String()})
	obs = do(t, s, ActReadFile, ReadFileArgs{Path: "long.txt"})
	wantContent(t, obs, false, "long.txt (700 lines), lines 1-250:", "   250\tl250\n", "Call read_file with start_line=251 to read on.")
	wantListing(t, obs, "long.txt", 700, 1, 250)
	obs = do(t, s, ActReadFile, ReadFileArgs{Path: "long.txt", StartLine: 600})
	wantContent(t, obs, false, "   600\tl600\n", "   700\tl700\n")
	wantListing(t, obs, "long.txt", 700, 600, 700)
	if strings.Contains(obs.Content, "read on") {
		t.Errorf("the end of the file says there is more:\n%s", obs.Content)
	}

	// Wide lines are cut by size so that the loop never cuts a listing.
	writeFiles(t, f.ws.Dir, map[string]string{"wide.txt": strings.Repeat(strings.Repeat("w", 100)+"\n", 200)})
	obs = do(t, s, ActReadFile, ReadFileArgs{Path: "wide.txt"})
	if len(obs.Content) > s.h.cfg.OutputLimit {
		t.Errorf("read_file returned %d bytes, over the limit %d", len(obs.Content), s.h.cfg.OutputLimit)
	}
	wantContent(t, obs, false, "to read on.")
	if n := strings.Count(obs.Content, "\t"+strings.Repeat("w", 100)+"\n"); obs.Listing == nil || len(obs.Listing.Lines) != n || n < 10 {
		t.Errorf("%d lines shown, %d listed", n, len(obs.Listing.Lines))
	}

	writeFiles(t, f.ws.Dir, map[string]string{"empty.txt": ""})
	obs = do(t, s, ActReadFile, ReadFileArgs{Path: "empty.txt"})
	wantContent(t, obs, false, "empty.txt is empty.")
	wantListing(t, obs, "empty.txt", 0, 1, 0)
}

// wantListing checks that obs lists lines from to to (none when to < from)
// of the file at path, total lines long, each as Content shows it.
func wantListing(t *testing.T, obs Observation, path string, total, from, to int) {
	t.Helper()
	l := obs.Listing
	if l == nil || l.Path != path || l.Total != total || len(l.Lines) != max(to-from+1, 0) {
		t.Fatalf("Listing = %+v, want %s (%d lines), lines %d-%d", l, path, total, from, to)
	}
	for i, line := range l.Lines {
		if line.N != from+i || !strings.Contains(obs.Content, fmt.Sprintf("%6d\t%s\n", line.N, line.Text)) {
			t.Errorf("listed line %d = %+v, not as shown:\n%s", i, line, obs.Content)
		}
	}
}

func TestFindFile(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	writeFiles(t, f.ws.Dir, map[string]string{"calc/extra_test.go": "package calc\n"}) // untracked

	obs := do(t, s, ActFindFile, FindFileArgs{Pattern: "calc.go"})
	wantContent(t, obs, false, "1 file match \"calc.go\":\ncalc/calc.go\n")
	if obs.Find == nil || fmt.Sprint(obs.Find.Files) != "[calc/calc.go]" {
		t.Errorf("Find = %+v", obs.Find)
	}
	obs = do(t, s, ActFindFile, FindFileArgs{Pattern: "*_test.go"})
	wantContent(t, obs, false, "2 files match", "calc/calc_test.go", "calc/extra_test.go")
	if obs.Find == nil || fmt.Sprint(obs.Find.Files) != "[calc/calc_test.go calc/extra_test.go]" {
		t.Errorf("Find = %+v", obs.Find)
	}
	obs = do(t, s, ActFindFile, FindFileArgs{Pattern: "**/*.go"})
	wantContent(t, obs, false, "4 files match")
	wantContent(t, do(t, s, ActFindFile, FindFileArgs{Pattern: "calc/*.go"}), false, "3 files match")
	wantContent(t, do(t, s, ActFindFile, FindFileArgs{Pattern: "STRS"}), false, "strs/strs.go")
	obs = do(t, s, ActFindFile, FindFileArgs{Pattern: "nothing-like-it"})
	wantContent(t, obs, false, "No file matches")
	if obs.Find == nil || len(obs.Find.Files) != 0 {
		t.Errorf("Find = %+v", obs.Find)
	}
	wantContent(t, do(t, s, ActFindFile, FindFileArgs{Pattern: "[a"}), true, "malformed")
}

func TestGoToLine(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	var long strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&long, "l%d\n", i)
	}
	writeFiles(t, f.ws.Dir, map[string]string{"long.txt": long.String()})

	obs := do(t, s, ActGoToLine, GoToLineArgs{Path: "long.txt", Line: 100})
	wantContent(t, obs, false, "lines 75-124 around line 100", "    75\tl75\n", "   124\tl124\n")
	if strings.Contains(obs.Content, "\tl74\n") || strings.Contains(obs.Content, "\tl125\n") {
		t.Errorf("more than 50 lines:\n%s", obs.Content)
	}
	wantListing(t, obs, "long.txt", 200, 75, 124)
	wantContent(t, do(t, s, ActGoToLine, GoToLineArgs{Path: "long.txt", Line: 3}), false, "lines 1-50 around line 3")
	wantContent(t, do(t, s, ActGoToLine, GoToLineArgs{Path: "long.txt", Line: 199}), false, "lines 151-200 around line 199")
	wantContent(t, do(t, s, ActGoToLine, GoToLineArgs{Path: "long.txt", Line: 201}), true, "line 201 is not in it")
	wantContent(t, do(t, s, ActGoToLine, GoToLineArgs{Path: "../x", Line: 1}), true, "outside the workspace")
}

func TestSearchCode(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	// The file of the stack frames ranks first.
	obs := do(t, s, ActSearchCode, SearchCodeArgs{Query: "Add("})
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
	obs = do(t, s, ActSearchCode, SearchCodeArgs{Query: "Add("})
	if strings.Index(obs.Content, "calc/calc_test.go:") < strings.Index(obs.Content, "calc/calc.go:") {
		t.Errorf("a test file ranks before a non-test file:\n%s", obs.Content)
	}

	obs = do(t, s, ActSearchCode, SearchCodeArgs{Query: `^func \w+\(a, b int\)`, Regex: true})
	wantContent(t, obs, false, "2 matches in 1 file", "calc/calc.go:9:", "calc/calc.go:17:")
	wantContent(t, do(t, s, ActSearchCode, SearchCodeArgs{Query: "(", Regex: true}), true, "not valid")
	wantContent(t, do(t, s, ActSearchCode, SearchCodeArgs{Query: "SHOUT"}), false, "ignoring case", "strs/strs.go:6:")
	obs = do(t, s, ActSearchCode, SearchCodeArgs{Query: "zzz-absent"})
	wantContent(t, obs, false, "No match")
	if obs.Search == nil || len(obs.Search.Hits) != 0 {
		t.Errorf("Search = %+v", obs.Search)
	}

	// Untracked files are searched; results are capped with a count of the rest.
	var many strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&many, "needle %d\n", i)
	}
	writeFiles(t, f.ws.Dir, map[string]string{"gen/many.txt": many.String(), "gen/few.txt": "needle\n"})
	// A session lists the files once; a new one sees them.
	s = newTestSession(t, f, nil)
	obs = do(t, s, ActSearchCode, SearchCodeArgs{Query: "needle"})
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

func TestSearchCodeInFile(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActSearchCodeInFile, SearchCodeArgs{Query: "return ", Path: "calc/calc.go"})
	wantContent(t, obs, false, "3 matches for \"return \" in calc/calc.go", "calc/calc.go:10: \treturn a - b", "calc/calc.go:14:", "calc/calc.go:18:")
	if obs.Search == nil || fmt.Sprint(obs.Search.Hits) != "[{calc/calc.go 10 \treturn a - b} {calc/calc.go 14 func (x *Adder) Add(n int) int { return Add(x.Base, n) }} {calc/calc.go 18 \treturn a - b}]" {
		t.Errorf("Search = %+v", obs.Search)
	}
	wantContent(t, do(t, s, ActSearchCodeInFile, SearchCodeArgs{Query: `^\s+return a`, Regex: true, Path: "calc/calc.go"}), false, "2 matches")
	wantContent(t, do(t, s, ActSearchCodeInFile, SearchCodeArgs{Query: "x", Path: "../etc"}), true, "outside the workspace")
	wantContent(t, do(t, s, ActSearchCodeInFile, SearchCodeArgs{Query: "x", Path: "calc/none.go"}), true, "No file calc/none.go")
}

func TestSearchSymbols(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ActSearchClass, NameArgs{Name: "Adder"})
	wantContent(t, obs, false, "calc/calc.go:4-6 (struct Adder)", "     4\ttype Adder struct {\n     5\t\tBase int\n", "Methods: Add (calc/calc.go:14)")
	wantContent(t, do(t, s, ActSearchClass, NameArgs{Name: "Adde"}), true, "No type named \"Adde\"", "Adder (calc/calc.go:4)")

	obs = do(t, s, ActSearchMethod, NameArgs{Name: "Add"})
	wantContent(t, obs, false, "2 matches", "calc/calc.go:9-11 (func Add)", "    10\t\treturn a - b\n", "calc/calc.go:14-14 (method Adder.Add)")
	if obs.Symbols == nil || len(obs.Symbols.Symbols) != 2 || obs.Symbols.Symbols[0].Location() != "calc/calc.go:9" ||
		obs.Symbols.Symbols[1].QualifiedName() != "Adder.Add" || obs.Symbols.Symbols[1].EndLine != 14 {
		t.Errorf("Symbols = %+v", obs.Symbols)
	}
	obs = do(t, s, ActSearchMethod, NameArgs{Name: "Adder.Add"})
	wantContent(t, obs, false, "1 match", "method Adder.Add")
	wantContent(t, do(t, s, ActSearchMethod, NameArgs{Name: "Ad"}), true, "No function or method named \"Ad\"", "Add (calc/calc.go:9)")

	wantContent(t, do(t, s, ActSearchMethodInFile, NameArgs{Name: "Sub", Path: "calc/calc.go"}), false, "calc/calc.go:17-19 (func Sub)")
	wantContent(t, do(t, s, ActSearchMethodInFile, NameArgs{Name: "Mul", Path: "calc/calc.go"}), true, "No function or method named \"Mul\" in calc/calc.go", "Sub (calc/calc.go:17)")
	wantContent(t, do(t, s, ActSearchMethodInFile, NameArgs{Name: "Sub", Path: "../x.go"}), true, "outside the workspace")

	wantContent(t, do(t, s, ActSearchMethodInClass, NameArgs{Name: "Add", Class: "*Adder"}), false, "1 match", "calc/calc.go:14-14 (method Adder.Add)")
	wantContent(t, do(t, s, ActSearchMethodInClass, NameArgs{Name: "Sub", Class: "Adder"}), true, "No method \"Sub\" of type \"Adder\"", "Adder.Add (calc/calc.go:14)")
	wantContent(t, do(t, s, ActSearchMethodInClass, NameArgs{Name: "Sub"}), true, "class")

	// The index follows edits.
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n=======\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, false, "Edited calc/calc.go")
	wantContent(t, do(t, s, ActSearchMethod, NameArgs{Name: "Mul"}), false, "calc/calc.go:22-22 (func Mul)")
}

func TestRunTests(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ActRunTests, RunTestsArgs{})
	// Failing tests are the tool's answer, not an error of the call.
	wantContent(t, obs, false, "FAIL: 0 passed, 1 failed (the task's failing tests)", "--- FAIL: example.com/calc/calc.TestAdd", "Add(2, 3) = -1, want 5")
	if obs.Tests == nil || obs.Tests.OK || len(obs.Tests.Failed) != 1 || obs.Tests.Failed[0].Test != "TestAdd" {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
	if s.oraclePassed {
		t.Error("a failing oracle run counts as passed")
	}

	obs = do(t, s, ActRunTests, RunTestsArgs{Tests: []string{"TestSub"}})
	wantContent(t, obs, false, "PASS: 1 passed, 0 failed", "Passed: example.com/calc/calc.TestSub")
	if obs.Tests == nil || !obs.Tests.OK {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
	if s.oraclePassed {
		t.Error("a run of other tests counts as the oracle")
	}

	wantContent(t, do(t, s, ActRunTests, RunTestsArgs{Tests: []string{"TestNope"}}), true, "Not found: resolve TestNope", "test not found")

	// A name that exists nowhere does not stop the others.
	obs = do(t, s, ActRunTests, RunTestsArgs{Tests: []string{"TestNope", "TestSub"}})
	wantContent(t, obs, false, "FAIL: 1 passed, 0 failed, 1 unknown", "Not found: resolve TestNope", "Passed: example.com/calc/calc.TestSub")

	// A package runs whole; an explicit list is not labelled as the task's.
	obs = do(t, s, ActRunTests, RunTestsArgs{Tests: []string{"./calc"}})
	wantContent(t, obs, false, "FAIL: 1 passed, 1 failed (these include the task's failing tests)", "--- FAIL: example.com/calc/calc.TestAdd")

	// Listing the tests of a package runs nothing.
	obs = do(t, s, ActRunTests, RunTestsArgs{List: true})
	wantContent(t, obs, false, "example.com/calc/calc (2 tests):\n  TestAdd\n  TestSub\n")

	// A broken build is reported as such.
	writeFiles(t, f.ws.Dir, map[string]string{"calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a +  }\n"})
	obs = do(t, s, ActRunTests, RunTestsArgs{Tests: []string{"example.com/calc/calc.TestAdd", "TestSub"}})
	wantContent(t, obs, false, "BUILD FAILED")
	if obs.Tests == nil || len(obs.Tests.Build) == 0 {
		t.Fatalf("Tests = %+v", obs.Tests)
	}
}

type fakePatcher struct {
	blocks string
	err    error
	got    []string // path, content, instructions
}

func (p *fakePatcher) Blocks(_ context.Context, path, content, instructions string) (string, error) {
	p.got = []string{path, content, instructions}
	return p.blocks, p.err
}

func TestEdit(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(f.ws.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	before := read("calc/calc.go")

	// Problems the policy can fix leave the file alone.
	obs := do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn a + b\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, true, "was not applied", "block 1 of 1", "matches 2 places (lines 10, 18)")
	if obs.Edit == nil || obs.Edit.Applied {
		t.Errorf("Edit = %+v", obs.Edit)
	}
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n\treturn a * b\n}\n=======\nx\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, true, "does not match", "nearest lines", "     9\tfunc Add(a, b int) int {")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "return a + b"}), true, "cannot be read", "<<<<<<< SEARCH")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Instructions: "fix Add"}), true, "No patcher")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: "calc/calc.go"}), true, "Give blocks")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: "../evil.go", Blocks: "<<<<<<< SEARCH\n=======\npackage evil\n>>>>>>> REPLACE\n"}), true, "outside the workspace")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: ".git/hooks/pre-commit", Blocks: "<<<<<<< SEARCH\n=======\nexit 1\n>>>>>>> REPLACE\n"}), true, "outside the workspace")
	wantContent(t, do(t, s, ActEdit, EditArgs{Path: "calc/nope.go", Blocks: "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"}), true, "does not exist", "empty SEARCH")
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.ws.Dir), "evil.go")); err == nil {
		t.Fatal("an edit wrote outside the workspace")
	}
	if read("calc/calc.go") != before {
		t.Fatal("a refused edit changed the file")
	}

	// The fix, found by the whitespace-tolerant match.
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n    return a - b\n}\n=======\nfunc Add(a, b int) int {\n\treturn a + b\n}\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, false, "Edited calc/calc.go: 1 block applied", "-\treturn a - b", "+\treturn a + b", "clean")
	if obs.Edit == nil || !obs.Edit.Applied || obs.Edit.Diagnostics != "" || !strings.Contains(obs.Edit.Diff, "+\treturn a + b") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}

	// Static analysis after edits: gofmt, build, vet.
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn   a - b\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "gofmt: calc/calc.go: not gofmt-formatted") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn   a - b\n=======\n\treturn a - c\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "build: calc/calc.go:") || !strings.Contains(obs.Edit.Diagnostics, "undefined: c") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}
	wantContent(t, obs, false, "Static analysis found problems")
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\npackage calc\n=======\npackage calc\n\nimport \"fmt\"\n\nfunc debug() { fmt.Printf(\"%d\\n\", \"s\") }\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n\treturn a - c\n=======\n\treturn a - b\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "vet: calc/calc.go:") || !strings.Contains(obs.Edit.Diagnostics, "Printf") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}

	// A new file, through a patcher.
	p := &fakePatcher{blocks: "calc/mul.go\n```go\n<<<<<<< SEARCH\n=======\npackage calc\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n>>>>>>> REPLACE\n```\n"}
	s.h.patcher = p
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/mul.go", Instructions: "add Mul"})
	wantContent(t, obs, false, "Created calc/mul.go", "written by the patcher", "new file mode", "+func Mul(a, b int) int { return a * b }")
	if obs.Edit.Diagnostics == "" || strings.Contains(obs.Edit.Diagnostics, "mul.go") {
		// vet still reports debug's Printf; mul.go itself is clean.
		t.Logf("diagnostics: %s", obs.Edit.Diagnostics)
	}
	if len(p.got) != 3 || p.got[0] != "calc/mul.go" || p.got[1] != "" || p.got[2] != "add Mul" {
		t.Errorf("patcher got %q", p.got)
	}
	p.err = errors.New("model unavailable")
	if _, err := s.execute(context.Background(), NewAction(ActEdit, "", EditArgs{Path: "calc/mul.go", Instructions: "x"})); err == nil || !strings.Contains(err.Error(), "model unavailable") {
		t.Errorf("a patcher failure is not a Go error: %v", err)
	}
}

func TestUnknownActionAndBadArgs(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	obs, err := s.execute(context.Background(), Action{Name: "open_file"})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, `Unknown action "open_file"`, "read_file")
	obs, err = s.execute(context.Background(), Action{Name: ActGoToLine, Args: []byte(`{"path": "calc/calc.go", "line": "ten"}`)})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, "arguments of go_to_line are not valid")
}

func TestSpecs(t *testing.T) {
	specs := Specs()
	if len(specs) != 15 {
		t.Fatalf("%d tools, want 15", len(specs))
	}
	seen := map[string]bool{}
	for _, sp := range specs {
		if seen[sp.Name] || sp.Description == "" || sp.Parameters["type"] != "object" {
			t.Errorf("bad spec %+v", sp)
		}
		seen[sp.Name] = true
	}
	for _, name := range []string{ActExit, ActGetDiffDetails, ActGetTaskDetails, ActReadDirectory, ActReadFile, ActFindFile, ActGoToLine,
		ActSearchCode, ActSearchCodeInFile, ActSearchClass, ActSearchMethod, ActSearchMethodInFile, ActSearchMethodInClass, ActRunTests, ActEdit} {
		if !seen[name] {
			t.Errorf("no spec for %s", name)
		}
	}
}
