package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Without a blamed commit, get_diff_details shows the latest commit that
// touched the failing test's package, and says so.
func TestGetDiffDetailsWithoutBlame(t *testing.T) {
	f := newFixture(t)
	f.task.Bisection = task.Bisection{}
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActGetDiffDetails, DiffArgs{})
	wantContent(t, obs, false,
		"The task has no blamed commit: this is the most recent commit that touched the failing tests' package (./calc)",
		"commit "+f.bad, "calc: simplify Add", "+\treturn a - b")
}

// The flakiness evidence is shown test by test.
func TestTaskDetailsFlakinessByTest(t *testing.T) {
	f := newFixture(t)
	f.task.FlakinessByTest = []task.TestFlakiness{
		{Test: "example.com/calc/calc.TestAdd", Runs: 3, Failures: 3, Verdict: "reliable"},
		{Test: "example.com/calc/calc.TestSub", Runs: 3, Failures: 1, Verdict: "flaky"},
	}
	s := newTestSession(t, f, nil)
	wantContent(t, do(t, s, ActGetTaskDetails, nil), false,
		"example.com/calc/calc.TestAdd: failed 3 of 3 runs (reliable)",
		"example.com/calc/calc.TestSub: failed 1 of 3 runs (flaky)")
}

// A file with formatting debt: a clean edit reports no finding, and an edit
// that formats a line badly reports that line alone.
func TestEditFeedbackCountsOnlyNewFindings(t *testing.T) {
	f := newFixture(t)
	debt := "package calc\n\n// Scale multiplies.\nfunc Scale(a, k int) int {\nreturn a*k\n}\n\n// Half halves.\nfunc Half(a int) int {\n  return a/2\n}\n"
	src := f.task.Repo
	writeFiles(t, src, map[string]string{"calc/debt.go": debt})
	repo := gitrepo.Repo{Dir: src}
	commit, err := repo.CommitAll(context.Background(), "calc: scale and half")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(context.Background(), src, commit, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	f.ws, f.task.Commit = ws, commit
	s := newTestSession(t, f, nil)

	clean := "<<<<<<< SEARCH\n// Half halves.\n=======\n// Half halves a, rounding\n// toward zero, as integer\n// division does; it is\n// used by the layout code\n// and must stay cheap.\n>>>>>>> REPLACE\n"
	obs := do(t, s, ActEdit, EditArgs{Path: "calc/debt.go", Blocks: clean})
	wantContent(t, obs, false, "no new finding", "were there before this edit")
	if obs.Edit == nil || obs.Edit.Diagnostics != "" {
		t.Fatalf("diagnostics of a clean edit = %+v", obs.Edit)
	}

	bad := "<<<<<<< SEARCH\nreturn a*k\n=======\nreturn a*k\n}\n\n// Third thirds.\nfunc Third(a int) int {\nreturn   a/3\n>>>>>>> REPLACE\n"
	obs = do(t, s, ActEdit, EditArgs{Path: "calc/debt.go", Blocks: bad})
	wantContent(t, obs, false, "Static analysis found problems this edit brought", `gofmt would rewrite "return   a/3"`)
	if strings.Contains(obs.Edit.Diagnostics, "a/2") || strings.Contains(obs.Edit.Diagnostics, "a*k") {
		t.Errorf("old formatting debt is reported as the edit's:\n%s", obs.Edit.Diagnostics)
	}
}

// A search that finds nothing suggests near matches: "queryAll" finds
// "query.all" and "Query_All".
func TestSearchCodeNearMatches(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.ws.Dir, map[string]string{"db/db.go": "package db\n\n// Rows runs the query.\nfunc Rows(q string) string {\n\treturn \"SELECT \" + q + \" -- query.all\"\n}\n\nconst Query_All = 1\n"})
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActSearchCode, SearchCodeArgs{Query: "queryAll"})
	wantContent(t, obs, false, "near matches: the words query, all", "db/db.go:5:", "db/db.go:8:")
	if got := identWords("HTTPServer_v2.readAll"); strings.Join(got, " ") != "http server v2 read all" {
		t.Errorf("identWords = %q", got)
	}
}

// search_method shows a 92-line function whole.
func TestSearchMethodShowsLongFunctionWhole(t *testing.T) {
	f := newFixture(t)
	var body strings.Builder
	body.WriteString("package calc\n\n// Long does many small things.\nfunc Long(x int) int {\n")
	for i := 0; i < 89; i++ {
		fmt.Fprintf(&body, "\tx += %d\n", i)
	}
	body.WriteString("\treturn x\n}\n")
	writeFiles(t, f.ws.Dir, map[string]string{"calc/long.go": body.String()})
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActSearchMethod, NameArgs{Name: "Long"})
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
	writeFiles(t, f.ws.Dir, map[string]string{"calc/huge.go": body.String()})
	s.idxStale = true
	obs = do(t, s, ActSearchMethod, NameArgs{Name: "Huge"})
	wantContent(t, obs, false, "calc/huge.go:4-906 (func Huge)", "more lines, to line 906, not shown", "use read_file with start_line=")
	if len(obs.Content) > DefaultOutputLimit {
		t.Errorf("the observation is %d characters, over the limit", len(obs.Content))
	}
}

// run_tests with localize ranks the line only the failing test runs first.
func TestRunTestsLocalize(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	obs := do(t, s, ActRunTests, RunTestsArgs{Localize: true})
	wantContent(t, obs, false, "spectrum-based fault localization (Ochiai) over the coverage of 1 failing test and 1 passing test",
		"calc/calc.go:10 score 1.00 (run by 1 failing, 0 passing): return a - b")
	if obs.Tests == nil || len(obs.Tests.Suspects) == 0 || obs.Tests.Suspects[0].File != "calc/calc.go" {
		t.Fatalf("suspects = %+v", obs.Tests)
	}
}
