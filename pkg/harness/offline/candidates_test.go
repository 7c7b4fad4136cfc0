package offline

import (
	"strings"
	"testing"
)

func TestIsSource(t *testing.T) {
	for p, want := range map[string]bool{
		"stats/window.go":       true,
		"stats/window_test.go":  false,
		"README.md":             false,
		"":                      false,
		"shop/pricing.py":       true,
		"shop/test_pricing.py":  false,
		"shop/pricing_test.py":  false,
		"tests/helpers.py":      false,
		"conftest.py":           false,
		"shop/testing.py":       true,
		"shop/data/prices.json": false,
	} {
		if got := testLangs.isSource(p); got != want {
			t.Errorf("isSource(%q) = %v", p, got)
		}
	}
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

// TestRankRestoresTheReplacedLine: where the blame commit replaced a line,
// the one-token template that puts it back comes first, ahead of templates
// with higher priors on the same line (a boundary flip here).
func TestRankRestoresTheReplacedLine(t *testing.T) {
	cur := strings.Replace(rankFile, "if x > m {", "if x < m {", 1)
	diff := `diff --git a/stats/window.go b/stats/window.go
--- a/stats/window.go
+++ b/stats/window.go
@@ -13,7 +13,7 @@ func Max(xs []int) int {
 	m := xs[0]
 	for _, x := range xs {
-		if x > m {
+		if x < m {
 			m = x
 		}
 	}
`
	ev := evidence{models: map[string]*fileModel{"stats/window.go": modelOf("stats/window.go", cur)}, diffs: parseDiff(t, diff),
		called: map[string]bool{"Max": true}}
	cands := rank(ev)
	if len(cands) < 2 {
		t.Fatalf("candidates: %v", cands)
	}
	if c := cands[0]; c.Line != 16 || c.New != "\t\tif x > m {" || !strings.Contains(strings.Join(c.Why, "; "), "as it was before the blame commit") {
		t.Errorf("first candidate = %s (%s, score %.1f, %v)", c.Describe(), c.Template, c.Score, c.Why)
	}
}
