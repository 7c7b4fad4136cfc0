package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/task"
)

func TestGetTaskDetails(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, GetTaskDetails, nil)
	wantContent(t, obs, false,
		"example.com/calc/calc.TestAdd", "Add(2, 3) = -1, want 5", "calc/calc_test.go:7",
		"--- FAIL: TestAdd", "failed 3 of 3 reruns (reliable)", f.Bad[:12], `"calc: simplify Add"`)
}

// The flakiness evidence is shown test by test.
func TestTaskDetailsFlakinessByTest(t *testing.T) {
	f := harnesstest.Calc(t)
	f.Task.FlakinessByTest = []task.TestFlakiness{
		{Test: "example.com/calc/calc.TestAdd", Runs: 3, Failures: 3, Verdict: "reliable"},
		{Test: "example.com/calc/calc.TestSub", Runs: 3, Failures: 1, Verdict: "flaky"},
	}
	s := newTestSession(t, f, nil)
	wantContent(t, do(t, s, GetTaskDetails, nil), false,
		"example.com/calc/calc.TestAdd: failed 3 of 3 runs (reliable)",
		"example.com/calc/calc.TestSub: failed 1 of 3 runs (flaky)")
}

func TestGetDiffDetails(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, GetDiffDetails, GetDiffDetailsArgs{})
	wantContent(t, obs, false, "commit "+f.Bad, "calc: simplify Add", "Share the code of Sub.",
		"Files changed (1):\n  calc/calc.go", "diff --git a/calc/calc.go b/calc/calc.go", "-\treturn a + b", "+\treturn a - b")
	// The diff alone, as shown, without the message around it.
	if c := obs.Commit; c == nil || c.SHA != f.Bad || !strings.HasPrefix(c.Diff, "diff --git a/calc/calc.go b/calc/calc.go") ||
		!strings.Contains(c.Diff, "+\treturn a - b") || strings.Contains(c.Diff, "Share the code") || !strings.Contains(obs.Content, c.Diff) {
		t.Errorf("Commit = %+v", obs.Commit)
	}

	obs = do(t, s, GetDiffDetails, GetDiffDetailsArgs{Commit: f.Good})
	wantContent(t, obs, false, "calc: add and sub", "strs/strs.go")

	obs = do(t, s, GetDiffDetails, GetDiffDetailsArgs{Commit: "no-such-rev"})
	wantContent(t, obs, true, `No commit "no-such-rev"`)
}

// Without a blamed commit, get_diff_details shows the latest commit that
// touched the failing test's package, and says so.
func TestGetDiffDetailsWithoutBlame(t *testing.T) {
	f := harnesstest.Calc(t)
	f.Task.Bisection = task.Bisection{}
	s := newTestSession(t, f, nil)
	obs := do(t, s, GetDiffDetails, GetDiffDetailsArgs{})
	wantContent(t, obs, false,
		"The task has no blamed commit: this is the most recent commit that touched the failing tests' package (./calc)",
		"commit "+f.Bad, "calc: simplify Add", "+\treturn a - b")
}

func TestReadDirectory(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ReadDirectory, ReadDirectoryArgs{})
	wantContent(t, obs, false, "calc/\nstrs/\nREADME.md\ngo.mod\n")
	if strings.Contains(obs.Content, ".git") {
		t.Errorf("the listing shows .git:\n%s", obs.Content)
	}
	wantCalls(t, s, []call{
		{ReadDirectory, ReadDirectoryArgs{Path: "calc"}, false, []string{"calc.go\ncalc_test.go\n"}},
		{ReadDirectory, ReadDirectoryArgs{Path: "../"}, true, []string{"outside the workspace"}},
		{ReadDirectory, ReadDirectoryArgs{Path: "go.mod"}, true, []string{"is a file"}},
		{ReadDirectory, ReadDirectoryArgs{Path: "nope"}, true, []string{"Cannot read the directory nope"}},
	})
}

func TestReadFile(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)

	obs := do(t, s, ReadFile, ReadFileArgs{Path: "calc/calc.go"})
	wantContent(t, obs, false, "calc/calc.go (19 lines), lines 1-19:", "     1\tpackage calc\n", "     9\tfunc Add(a, b int) int {\n    10\t\treturn a - b\n")
	if strings.Contains(obs.Content, "read on") {
		t.Errorf("a short file says there is more:\n%s", obs.Content)
	}
	wantListing(t, obs, "calc/calc.go", 19, 1, 19)
	if l := obs.Listing.Lines; l[9] != (Line{10, "\treturn a - b"}) || l[1] != (Line{2, ""}) {
		t.Errorf("lines 2 and 10 = %+v, %+v", l[1], l[9])
	}

	obs = do(t, s, ReadFile, ReadFileArgs{Path: "calc/calc.go", StartLine: 17, EndLine: 18})
	wantContent(t, obs, false, "lines 17-18:\n    17\tfunc Sub(a, b int) int {\n    18\t\treturn a - b\n")
	if strings.Contains(obs.Content, "    19\t") {
		t.Errorf("the range was not kept:\n%s", obs.Content)
	}
	wantListing(t, obs, "calc/calc.go", 19, 17, 18)

	wantCalls(t, s, []call{
		{ReadFile, ReadFileArgs{Path: "../outside.go"}, true, []string{"is refused", "outside the workspace"}},
		{ReadFile, ReadFileArgs{Path: "/etc/passwd"}, true, []string{"is refused", "outside the workspace"}},
		{ReadFile, ReadFileArgs{Path: ".git/config"}, true, []string{"is refused", "outside the workspace"}},
		{ReadFile, ReadFileArgs{Path: "calc.go"}, true, []string{"No file calc.go.", "Files with that name: calc/calc.go"}},
		{ReadFile, ReadFileArgs{Path: "calc"}, true, []string{"is a directory"}},
		{ReadFile, ReadFileArgs{Path: "calc/calc.go", StartLine: 99}, true, []string{"past its end"}},
		{ReadFile, ReadFileArgs{}, true, []string{"path is required"}},
	})

	// A long file is cut, and the observation says how to read on.
	var long strings.Builder
	for i := 1; i <= 700; i++ {
		fmt.Fprintf(&long, "l%d\n", i)
	}
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"long.txt": long.String()})
	obs = do(t, s, ReadFile, ReadFileArgs{Path: "long.txt"})
	wantContent(t, obs, false, "long.txt (700 lines), lines 1-250:", "   250\tl250\n", "Call read_file with start_line=251 to read on.")
	wantListing(t, obs, "long.txt", 700, 1, 250)
	obs = do(t, s, ReadFile, ReadFileArgs{Path: "long.txt", StartLine: 600})
	wantContent(t, obs, false, "   600\tl600\n", "   700\tl700\n")
	wantListing(t, obs, "long.txt", 700, 600, 700)
	if strings.Contains(obs.Content, "read on") {
		t.Errorf("the end of the file says there is more:\n%s", obs.Content)
	}

	// Wide lines are cut by size so that the loop never cuts a listing.
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"wide.txt": strings.Repeat(strings.Repeat("w", 100)+"\n", 200)})
	obs = do(t, s, ReadFile, ReadFileArgs{Path: "wide.txt"})
	if len(obs.Content) > s.env.OutputLimit {
		t.Errorf("read_file returned %d bytes, over the limit %d", len(obs.Content), s.env.OutputLimit)
	}
	wantContent(t, obs, false, "to read on.")
	if n := strings.Count(obs.Content, "\t"+strings.Repeat("w", 100)+"\n"); obs.Listing == nil || len(obs.Listing.Lines) != n || n < 10 {
		t.Errorf("%d lines shown, %d listed", n, len(obs.Listing.Lines))
	}

	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"empty.txt": ""})
	obs = do(t, s, ReadFile, ReadFileArgs{Path: "empty.txt"})
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
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"calc/extra_test.go": "package calc\n"}) // untracked

	for _, tc := range []struct {
		pattern string
		isError bool
		want    []string // parts of the content
		files   string   // the files found, when the case says
	}{
		{"calc.go", false, []string{"1 file match \"calc.go\":\ncalc/calc.go\n"}, "[calc/calc.go]"},
		{"*_test.go", false, []string{"2 files match", "calc/calc_test.go", "calc/extra_test.go"}, "[calc/calc_test.go calc/extra_test.go]"},
		{"**/*.go", false, []string{"4 files match"}, ""},
		{"calc/*.go", false, []string{"3 files match"}, ""},
		{"STRS", false, []string{"strs/strs.go"}, ""},
		{"nothing-like-it", false, []string{"No file matches"}, "[]"},
		{"[a", true, []string{"malformed"}, ""},
	} {
		obs := do(t, s, FindFile, FindFileArgs{Pattern: tc.pattern})
		wantContent(t, obs, tc.isError, tc.want...)
		if tc.files != "" && (obs.Find == nil || fmt.Sprint(obs.Find.Files) != tc.files) {
			t.Errorf("%q: Find = %+v, want files %s", tc.pattern, obs.Find, tc.files)
		}
	}
}

func TestGoToLine(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	var long strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&long, "l%d\n", i)
	}
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"long.txt": long.String()})

	obs := do(t, s, GoToLine, GoToLineArgs{Path: "long.txt", Line: 100})
	wantContent(t, obs, false, "lines 75-124 around line 100", "    75\tl75\n", "   124\tl124\n")
	if strings.Contains(obs.Content, "\tl74\n") || strings.Contains(obs.Content, "\tl125\n") {
		t.Errorf("more than 50 lines:\n%s", obs.Content)
	}
	wantListing(t, obs, "long.txt", 200, 75, 124)
	wantCalls(t, s, []call{
		{GoToLine, GoToLineArgs{Path: "long.txt", Line: 3}, false, []string{"lines 1-50 around line 3"}},
		{GoToLine, GoToLineArgs{Path: "long.txt", Line: 199}, false, []string{"lines 151-200 around line 199"}},
		{GoToLine, GoToLineArgs{Path: "long.txt", Line: 201}, true, []string{"line 201 is not in it"}},
		{GoToLine, GoToLineArgs{Path: "../x", Line: 1}, true, []string{"outside the workspace"}},
	})
}
