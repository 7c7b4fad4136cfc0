package offline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

const sampleDiff = `commit 1234567890abcdef
Author: Someone <s@example.com>

    Make the window inclusive

diff --git a/stats/window.go b/stats/window.go
index 1111111..2222222 100644
--- a/stats/window.go
+++ b/stats/window.go
@@ -3,7 +3,7 @@ package stats
 // Sum adds xs[lo:hi].
 func Sum(xs []int, lo, hi int) int {
 	t := 0
-	for i := lo; i < hi; i++ {
+	for i := lo; i <= hi; i++ {
 		t += xs[i]
 	}
 	return t
@@ -20,3 +20,5 @@ func Max(xs []int) int {
 	return m
 }
+
+// Extra is new.
diff --git a/stats/window_test.go b/stats/window_test.go
new file mode 100644
--- /dev/null
+++ b/stats/window_test.go
@@ -0,0 +1,2 @@
+package stats
+// test
`

// parseDiff reads a diff the test wrote.
func parseDiff(t *testing.T, text string) []unidiff.File {
	t.Helper()
	files, err := unidiff.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestIsGoSource(t *testing.T) {
	for p, want := range map[string]bool{
		"stats/window.go":      true,
		"stats/window_test.go": false,
		"README.md":            false,
		"":                     false,
	} {
		if got := isGoSource(p); got != want {
			t.Errorf("isGoSource(%q) = %v", p, got)
		}
	}
}

// The blame diff is read from get_diff_details; the part before a line that
// cannot be read is kept, and the files are known by their new names.
func TestObserveDiffDetails(t *testing.T) {
	s := observeOne(t, harness.ActGetDiffDetails, harness.DiffArgs{}, harness.Observation{Content: sampleDiff})
	if len(s.diffs) != 2 || s.diffs[0].NewPath != "stats/window.go" || len(s.diffs[0].Hunks) != 2 {
		t.Fatalf("diffs = %+v", s.diffs)
	}
	broken := sampleDiff + "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3\n"
	s = observeOne(t, harness.ActGetDiffDetails, harness.DiffArgs{}, harness.Observation{Content: broken})
	if len(s.diffs) != 3 || s.diffs[1].NewPath != "stats/window_test.go" || s.diffs[2].NewPath != "x.go" {
		t.Errorf("diffs of a diff with a malformed hunk header = %+v", s.diffs)
	}
	gone := "diff --git a/old.go b/old.go\ndeleted file mode 100644\n--- a/old.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package old\n"
	s = observeOne(t, harness.ActGetDiffDetails, harness.DiffArgs{}, harness.Observation{Content: gone})
	if len(s.diffs) != 1 || s.diffs[0].NewPath != "" {
		t.Fatalf("diffs of a deletion = %+v", s.diffs)
	}
	if p, ok := s.resolve("old.go"); ok {
		t.Errorf("the deleted file resolves to %q", p)
	}
}

func TestParseListing(t *testing.T) {
	for name, tc := range map[string]string{
		"tab":       "stats/window.go (lines 4-6 of 30)\n     4\tfunc Sum(xs []int) int {\n     5\n     6\t\tt := 0 // 7: not a number\n",
		"colon":     "4: func Sum(xs []int) int {\n5:\n6: \tt := 0 // 7: not a number\n",
		"pipe":      "   4 | func Sum(xs []int) int {\n   5 |\n   6 | \tt := 0 // 7: not a number\n[truncated]\n",
		"cat-n-ish": "4|func Sum(xs []int) int {\n5|\n6|\tt := 0 // 7: not a number\n",
	} {
		t.Run(name, func(t *testing.T) {
			got := ParseListing(tc)
			want := map[int]string{4: "func Sum(xs []int) int {", 5: "", 6: "\tt := 0 // 7: not a number"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

func TestMutations(t *testing.T) {
	cases := []struct {
		line string
		want []string // some of the mutated lines expected
		not  []string
	}{
		{"\tfor i := lo; i <= hi; i++ {", []string{"\tfor i := lo; i < hi; i++ {", "\tfor i := lo; i <= hi; i-- {"}, nil},
		{"\treturn a - b", []string{"\treturn a + b"}, nil},
		{"\treturn xs[len(xs)-1]", []string{"\treturn xs[len(xs)]", "\treturn xs[len(xs)-2]", "\treturn xs[len(xs)+1]"}, nil},
		{"\tif ok && n > 0 {", []string{"\tif ok || n > 0 {", "\tif ok && n >= 0 {", "\tif !(ok && n > 0) {", "\tif ok && n > 1 {"}, nil},
		{"\tif !done {", []string{"\tif done {"}, []string{"\tif !!done {"}},
		{"\treturn x * 2", []string{"\treturn x / 2", "\treturn x * 3", "\treturn x * 1"}, nil},
		{"\ts := \"a\" + name", nil, []string{"\ts := \"a\" - name"}},
		{"\tn := -1", []string{"\tn := -2", "\tn := -0"}, []string{"\tn := +1"}},
		{"\treturn xs[i]", []string{"\treturn xs[i-1]", "\treturn xs[i+1]"}, nil},
		{"\tvar m map[string]int", nil, []string{"\tvar m map[string-1]int"}},
		{"func f(x *T, n int) bool {", nil, []string{"func f(x /T, n int) bool {"}},
		{"\t// if a < b {", nil, []string{"\t// if a <= b {"}},
		{"\tmsg := \"a < b\"", nil, []string{"\tmsg := \"a <= b\""}},
	}
	for _, tc := range cases {
		got := map[string]bool{}
		for _, m := range Mutations(tc.line) {
			got[m.New] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("Mutations(%q) lacks %q; got %q", tc.line, w, keys(got))
			}
		}
		for _, n := range tc.not {
			if got[n] {
				t.Errorf("Mutations(%q) has %q", tc.line, n)
			}
		}
	}
	// The boundary flip is the most likely mutation of a comparison.
	ms := Mutations("\tif i <= n {")
	if ms[0].Template != TplBoundary || ms[0].New != "\tif i < n {" {
		t.Errorf("first mutation = %+v", ms[0])
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestMakeBlockUnique(t *testing.T) {
	lines := []string{"func a() {", "\tx++", "}", "", "func b() {", "\tx++", "}"}
	search, replace, ok := makeBlock(lines, change{start: 6, end: 6, repl: []string{"\tx--"}})
	if !ok {
		t.Fatal("no block")
	}
	if strings.Join(search, "\n") != "func b() {\n\tx++" || strings.Join(replace, "\n") != "func b() {\n\tx--" {
		t.Errorf("search %q replace %q", search, replace)
	}
	// A line that is a substring of another one needs context too.
	lines = []string{"\tif a {", "\t\tif a {", "\t\t}", "\t}"}
	search, _, ok = makeBlock(lines, change{start: 1, end: 1, repl: []string{"\tif !a {"}})
	if !ok || len(search) < 2 {
		t.Errorf("search = %q, %v", search, ok)
	}
}

func TestBlocksInverse(t *testing.T) {
	lines := strings.Split("package p\n\nfunc f(a, b int) int {\n\tc := a + b\n\treturn c * 2\n}\n\nfunc g() int { return 1 }", "\n")
	changes := []change{{start: 4, end: 4, repl: []string{"\tc := a - b", "\tc++"}}, {start: 7, end: 8, repl: nil}}
	fwd, inv, after, ok := blocks(lines, changes)
	if !ok {
		t.Fatal("no blocks")
	}
	if got := applyBlocks(t, lines, fwd); strings.Join(got, "\n") != strings.Join(after, "\n") {
		t.Fatalf("forward gives %q, want %q", got, after)
	}
	if got := applyBlocks(t, after, inv); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("inverse gives %q, want %q", got, lines)
	}
}

// applyBlocks applies SEARCH/REPLACE text the way a patcher does: each
// SEARCH must occur once.
func applyBlocks(t *testing.T, lines []string, blocks string) []string {
	t.Helper()
	content := strings.Join(lines, "\n") + "\n"
	out, err := applyBlockText(content, blocks)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

func applyBlockText(content, blocks string) (string, error) {
	parts := strings.Split(blocks, "<<<<<<< SEARCH\n")
	for _, p := range parts[1:] {
		search, rest, ok := strings.Cut(p, "=======\n")
		if !ok {
			return "", fmt.Errorf("malformed block %q", p)
		}
		replace, _, ok := strings.Cut(rest, ">>>>>>> REPLACE")
		if !ok {
			return "", fmt.Errorf("malformed block %q", p)
		}
		if n := strings.Count(content, search); n != 1 {
			return "", fmt.Errorf("SEARCH occurs %d times: %q", n, search)
		}
		content = strings.Replace(content, search, replace, 1)
	}
	return content, nil
}

const rankFile = `package stats

// Sum adds xs[lo:hi].
func Sum(xs []int, lo, hi int) int {
	t := 0
	for i := lo; i <= hi; i++ {
		t += xs[i]
	}
	return t
}

// Max is the largest of xs.
func Max(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	return m
}
`

func modelOf(path, src string) *fileModel {
	m := newFileModel(path)
	listing := map[int]string{}
	for i, l := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		listing[i+1] = l
	}
	m.merge(listing)
	return m
}

func TestRankPrefersBlameLines(t *testing.T) {
	// The blame hunk, shifted by two lines since (a later commit added
	// lines above it).
	diff := strings.Replace(sampleDiff, "@@ -3,7 +3,7 @@", "@@ -1,7 +1,7 @@", 1)
	ev := evidence{
		models: map[string]*fileModel{"stats/window.go": modelOf("stats/window.go", rankFile)},
		diffs:  parseDiff(t, diff),
		called: map[string]bool{"Sum": true},
	}
	cands := rank(ev)
	if len(cands) == 0 {
		t.Fatal("no candidates")
	}
	c := cands[0]
	if c.Line != 6 || c.Template != TplBoundary || c.New != "\tfor i := lo; i < hi; i++ {" {
		t.Errorf("first candidate = %s (%s, score %.1f)", c.Describe(), c.Template, c.Score)
	}
	// Lines of Max, which neither the blame commit nor the test touch, are
	// not suspects; the hunk undo duplicates the boundary flip and is gone.
	for _, c := range cands {
		if c.Line >= 13 {
			t.Errorf("unexpected candidate on Max: %s", c.Describe())
		}
		if c.Template == TplUndoHunk {
			t.Errorf("undo duplicating the flip kept: %s", c.Describe())
		}
	}
}

func TestRankUndoesMultiLineHunk(t *testing.T) {
	cur := strings.Replace(rankFile, "\tfor i := lo; i <= hi; i++ {\n\t\tt += xs[i]\n\t}\n", "\tfor i := lo; i < hi; i++ {\n\t\tt += xs[i]\n\t\tt += xs[i] / 2\n\t}\n", 1)
	diff := `diff --git a/w.go b/w.go
--- a/w.go
+++ b/w.go
@@ -5,4 +5,5 @@ func Sum(xs []int, lo, hi int) int {
 	t := 0
 	for i := lo; i < hi; i++ {
 		t += xs[i]
+		t += xs[i] / 2
 	}
`
	ev := evidence{models: map[string]*fileModel{"w.go": modelOf("w.go", cur)}, diffs: parseDiff(t, diff)}
	cands := rank(ev)
	pos := -1
	for i, c := range cands {
		if c.Template == TplUndoHunk {
			pos = i
		}
	}
	if pos < 0 || pos > 8 {
		t.Fatalf("undo at %d of %d", pos, len(cands))
	}
	c := cands[pos]
	after := applyChanges(ev.models["w.go"].lines, c.changes)
	if want := strings.Replace(rankFile, "i <= hi", "i < hi", 1); strings.Join(after, "\n")+"\n" != want {
		t.Errorf("undo gives\n%s", strings.Join(after, "\n"))
	}
}

func TestRankFrames(t *testing.T) {
	ev := evidence{
		models: map[string]*fileModel{"stats/window.go": modelOf("stats/window.go", rankFile)},
		frames: []location{{"stats/window.go", 16}},
	}
	cands := rank(ev)
	if len(cands) == 0 || cands[0].Line != 16 {
		t.Fatalf("first candidate: %v", cands)
	}
	if cands[0].New != "\t\tif x >= m {" {
		t.Errorf("first = %s", cands[0].Describe())
	}
}

func TestListingTotal(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int
	}{
		{"a/b.go (300 lines), lines 1-250:\n     1\tpackage b\n[Shown: lines 1-250 of 300. Call read_file with start_line=251 to read on.]\n", 300},
		{"a/b.go (1 line), lines 1-1:\n     1\tpackage b\n", 1},
		{"a/b.go (400 lines), lines 370-400 around line 395:\n   370\tx\n", 400},
		{"a/b.go (lines 1-13 of 13)\n     1\tpackage b\n", 13},
		// A line of the file that looks like a header is code.
		{"     1\t// b.go (9 lines), lines 1-2:\n     2\tpackage b\n", 0},
		{"     1\tpackage b\n", 0},
	} {
		if got := ListingTotal(tc.content); got != tc.want {
			t.Errorf("ListingTotal(%q) = %d, want %d", tc.content, got, tc.want)
		}
	}
}

// observeOne feeds one step to a fresh state, as if the policy had asked it.
func observeOne(t *testing.T, name string, args any, obs harness.Observation) *state {
	t.Helper()
	ep := &harness.Episode{Task: task.Task{ID: "t"}, MaxSteps: 40}
	s := newState(New(nil), ep)
	s.observe(harness.Step{N: 1, Action: harness.NewAction(name, "", args), Observation: obs})
	return s
}

// A read_file listing cut short (the harness shows 250 lines at most) must
// not pass for the whole file.
func TestTruncatedListingIsIncomplete(t *testing.T) {
	var b strings.Builder
	b.WriteString("big.go (400 lines), lines 1-250:\n")
	for i := 1; i <= 250; i++ {
		fmt.Fprintf(&b, "%6d\tvar x%d = %d\n", i, i, i)
	}
	b.WriteString("[Shown: lines 1-250 of 400. Call read_file with start_line=251 to read on.]\n")
	s := observeOne(t, harness.ActReadFile, harness.ReadFileArgs{Path: "big.go"}, harness.Observation{Content: b.String()})
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

func TestObserveFindFile(t *testing.T) {
	s := observeOne(t, harness.ActFindFile, harness.FindFileArgs{Pattern: "words_test.go"},
		harness.Observation{Content: "2 files match \"words_test.go\":\nwords/words_test.go\nold/words_test.go\n"})
	if got := fmt.Sprint(s.found["words_test.go"]); got != "[words/words_test.go old/words_test.go]" {
		t.Errorf("found = %s", got)
	}
	s = observeOne(t, harness.ActFindFile, harness.FindFileArgs{Pattern: "gone.go"},
		harness.Observation{Content: "No file matches \"gone.go\"."})
	if got := s.found["gone.go"]; len(got) != 0 {
		t.Errorf("found for no match = %q", got)
	}
}

func TestObserveSearchMethod(t *testing.T) {
	hit := "1 match for the function or method named \"Mean\":\n\nstats/stats.go:4-13 (func Mean)\n" +
		"     4\tfunc Mean(xs []int) float64 {\n     5\t\treturn other(xs) // see util.go:9\n"
	s := observeOne(t, harness.ActSearchMethod, harness.NameArgs{Name: "Mean"}, harness.Observation{Content: hit})
	if got := fmt.Sprint(s.methods["Mean"]); got != "[{stats/stats.go 4}]" {
		t.Errorf("locations = %s", got)
	}
	miss := "No function or method named \"Meen\". Similar: Mean (stats/stats_test.go:9), Median (stats/median.go:3)"
	s = observeOne(t, harness.ActSearchMethod, harness.NameArgs{Name: "Meen"}, harness.Observation{Content: miss, IsError: true})
	if got := s.methods["Meen"]; len(got) != 0 {
		t.Errorf("a failed search located the name at %v", got)
	}
}

// An observation the loop cut to its limit loses the lines at the cut, which
// may be partial.
func TestParseListingTruncated(t *testing.T) {
	var b strings.Builder
	b.WriteString("a.go (40 lines), lines 1-40:\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%6d\tvar v%d = \"%s\"\n", i, i, strings.Repeat("x", 2000))
	}
	cut := clip.Middle(b.String(), 6000)
	if !strings.Contains(cut, "characters omitted") {
		t.Fatalf("not truncated: %q", cut)
	}
	got := ParseListing(cut)
	if len(got) == 0 {
		t.Fatal("nothing parsed")
	}
	for n, text := range got {
		if want := fmt.Sprintf("var v%d = \"%s\"", n, strings.Repeat("x", 2000)); text != want {
			t.Errorf("line %d = %q, a partial line", n, text)
		}
	}
}
