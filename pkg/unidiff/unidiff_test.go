package unidiff

import (
	"reflect"
	"strings"
	"testing"
)

// sampleDiff is `git show` output: a commit message, then the diff.
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

func mustParse(t *testing.T, text string) []File {
	t.Helper()
	files, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return files
}

func TestParseShow(t *testing.T) {
	files := mustParse(t, sampleDiff)
	if len(files) != 2 {
		t.Fatalf("files = %d, want 2: %+v", len(files), files)
	}
	f := files[0]
	if f.NewPath != "stats/window.go" || f.OldPath != "stats/window.go" || len(f.Hunks) != 2 {
		t.Fatalf("first file = %+v", f)
	}
	h := f.Hunks[0]
	if h.OldStart != 3 || h.NewStart != 3 || h.OldCount != 7 || h.NewCount != 7 {
		t.Errorf("hunk header = %+v", h)
	}
	added, removed := h.Changed()
	if added != 1 || removed != 1 {
		t.Errorf("changed = %d, %d", added, removed)
	}
	var plus Line
	for _, l := range h.Lines {
		if l.Kind == '+' {
			plus = l
		}
	}
	if plus.NewLine != 6 || plus.Text != "\tfor i := lo; i <= hi; i++ {" {
		t.Errorf("added line = %+v", plus)
	}
	if got := strings.Join(h.OldSide(), "\n"); !strings.Contains(got, "i < hi") || strings.Contains(got, "i <= hi") {
		t.Errorf("old side = %q", got)
	}
	if got := strings.Join(h.NewSide(), "\n"); !strings.Contains(got, "i <= hi") || strings.Contains(got, "i < hi") || len(h.NewSide()) != 7 {
		t.Errorf("new side = %q", got)
	}
	if a, _ := f.Hunks[1].Changed(); a != 2 {
		t.Errorf("second hunk added = %d", a)
	}
	if files[1].NewPath != "stats/window_test.go" || files[1].OldPath != "" || files[1].Path() != "stats/window_test.go" {
		t.Errorf("second file = %+v", files[1])
	}
}

func TestParseTruncated(t *testing.T) {
	cut := sampleDiff[:strings.Index(sampleDiff, " \t\tt += xs[i]")]
	files := mustParse(t, cut+"\n… [output truncated] …\n")
	if len(files) != 1 || len(files[0].Hunks) != 1 {
		t.Fatalf("files = %+v", files)
	}
	if n := len(files[0].Hunks[0].Lines); n != 5 {
		t.Errorf("lines of the cut hunk = %d, want 5", n)
	}
	// Cut between the --- and +++ lines: the names are the git header's.
	cut = sampleDiff[:strings.Index(sampleDiff, "+++ b/stats/window.go")-4]
	if files := mustParse(t, cut); len(files) != 1 || files[0].OldPath != "stats/window.go" || files[0].NewPath != "stats/window.go" {
		t.Errorf("cut after ---: %+v", files)
	}
	// Cut right after a header: the empty hunk is left out.
	cut = sampleDiff[:strings.Index(sampleDiff, " // Sum adds")]
	if files := mustParse(t, cut); len(files) != 1 || len(files[0].Hunks) != 0 {
		t.Errorf("cut after the header: %+v", files)
	}
}

func TestParseGit(t *testing.T) {
	patch := `diff --git a/a.go b/a.go
index 1111111..2222222 100644
--- a/a.go
+++ b/a.go
@@ -2,3 +2,3 @@ package a
 
-func A() int { return 1 }
+func A() int { return 2 }
 
diff --git a/new.go b/new.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.go
@@ -0,0 +1,2 @@
+package a
+// --- not a header
diff --git a/old_test.go b/old_test.go
deleted file mode 100644
--- a/old_test.go
+++ /dev/null
@@ -1 +0,0 @@
-package a
\ No newline at end of file
diff --git a/x/b.go b/y/b.go
similarity index 100%
rename from x/b.go
rename to y/b.go
diff --git a/img.png b/img.png
Binary files a/img.png and b/img.png differ
`
	got := mustParse(t, patch)
	type file struct {
		old, new string
		binary   bool
		changes  []Line
	}
	want := []file{
		{"a.go", "a.go", false, []Line{{Kind: '-', OldLine: 3, Text: "func A() int { return 1 }"}, {Kind: '+', NewLine: 3, Text: "func A() int { return 2 }"}}},
		{"", "new.go", false, []Line{{Kind: '+', NewLine: 1, Text: "package a"}, {Kind: '+', NewLine: 2, Text: "// --- not a header"}}},
		{"old_test.go", "", false, []Line{{Kind: '-', OldLine: 1, Text: "package a"}}},
		{"x/b.go", "y/b.go", false, nil},
		{"img.png", "img.png", true, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse = %+v, want %d files", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.OldPath != w.old || g.NewPath != w.new || g.Binary != w.binary || !reflect.DeepEqual(g.Changes(), w.changes) {
			t.Errorf("file %d = %+v (changes %+v), want %+v", i, g, g.Changes(), w)
		}
	}
	// The context lines are kept, numbered on both sides; the first one's
	// space was lost and it is still read as context.
	if h := got[0].Hunks[0]; len(h.Lines) != 4 || h.Lines[0] != (Line{Kind: ' ', OldLine: 2, NewLine: 2}) || h.Lines[3] != (Line{Kind: ' ', OldLine: 4, NewLine: 4}) {
		t.Errorf("hunk of a.go = %+v", h)
	}
	if p := got[3].Paths(); !reflect.DeepEqual(p, []string{"x/b.go", "y/b.go"}) {
		t.Errorf("Paths of a rename = %v", p)
	}
	if p, pp := got[2].Path(), got[2].Paths(); p != "old_test.go" || !reflect.DeepEqual(pp, []string{"old_test.go"}) {
		t.Errorf("Path, Paths of a deletion = %q, %v", p, pp)
	}
	if p := got[1].Paths(); !reflect.DeepEqual(p, []string{"new.go"}) {
		t.Errorf("Paths of a new file = %v", p)
	}
	if p := got[0].Paths(); !reflect.DeepEqual(p, []string{"a.go"}) {
		t.Errorf("Paths of a change = %v", p)
	}
}

func TestParsePlain(t *testing.T) {
	patch := "--- a.go\t2024-01-01\n+++ a.go\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n--- b.go\n+++ b.go\n@@ -1,0 +1 @@\n+z\n"
	got := mustParse(t, patch)
	if len(got) != 2 || got[0].Path() != "a.go" || got[1].Path() != "b.go" || len(got[0].Changes()) != 2 || len(got[1].Changes()) != 1 {
		t.Fatalf("Parse = %+v", got)
	}
	// diff -ruN between two trees, with its command lines.
	patch = "diff -ruN a/x.go b/x.go\n--- a/x.go\t2024-01-01 10:00:00.000000000 +0000\n+++ b/x.go\t2024-01-02 10:00:00.000000000 +0000\n@@ -1,2 +1,2 @@\n a\n-b\n+c\ndiff -ruN a/y.go b/y.go\n--- a/y.go\t2024-01-01\n+++ /dev/null\t1970-01-01\n@@ -1 +0,0 @@\n-y\n"
	got = mustParse(t, patch)
	if len(got) != 2 || got[0].OldPath != "x.go" || got[0].NewPath != "x.go" || got[1].OldPath != "y.go" || got[1].NewPath != "" || got[1].Path() != "y.go" {
		t.Fatalf("diff -ruN = %+v", got)
	}
}

func TestParseMalformedHunkHeader(t *testing.T) {
	if _, err := Parse("diff --git a/a b/a\n@@ -x +1 @@\n"); err == nil || !strings.Contains(err.Error(), "hunk header") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed hunk: err = %v", err)
	}
	for _, bad := range []string{"@@ -1,2 @@", "@@ 1,2 +1,2 @@", "@@ -1,x +1 @@", "@@ -1 +-1 @@", "@@ -1 +1", "@@ -1 +1 @", "@@ "} {
		if _, err := Parse("--- a/a\n+++ b/a\n" + bad + "\n+x\n"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// The files before the bad header are kept, and so is the hunk before
	// it in the same file; nothing after it is read.
	patch := "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n" +
		"diff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n@@ -5 +5\n-p\n+q\n" +
		"diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-x\n+y\n"
	files, err := Parse(patch)
	if err == nil || !strings.Contains(err.Error(), "line 13") {
		t.Errorf("err = %v, want one about line 13", err)
	}
	if len(files) != 2 || files[0].Path() != "a" || files[1].Path() != "b" || len(files[1].Hunks) != 1 {
		t.Errorf("files = %+v, want a and b with one hunk", files)
	}
}

func TestParseNamelessFile(t *testing.T) {
	patch := "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\ndiff --git nonsense\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/c b/c\n"
	files, err := Parse(patch)
	if err == nil || !strings.Contains(err.Error(), "no name") || !strings.Contains(err.Error(), "line 7") {
		t.Errorf("err = %v, want one about line 7", err)
	}
	if len(files) != 1 || files[0].Path() != "a" {
		t.Errorf("files = %+v, want a", files)
	}
	if files, err := Parse("text\ndiff --git x\n"); err == nil || len(files) != 0 {
		t.Errorf("a nameless last file: %+v, %v", files, err)
	}
}

func TestParseNames(t *testing.T) {
	for _, c := range []struct {
		name, patch string
		old, new    string
	}{
		{"quoted", "diff --git \"a/caf\\303\\251 x.go\" \"b/caf\\303\\251 x.go\"\nindex 1..2 100644\n--- \"a/caf\\303\\251 x.go\"\n+++ \"b/caf\\303\\251 x.go\"\n@@ -1 +1 @@\n-a\n+b\n", "café x.go", "café x.go"},
		{"quoted, header only", "diff --git \"a/t\\tb.bin\" \"b/t\\tb.bin\"\nBinary files \"a/t\\tb.bin\" and \"b/t\\tb.bin\" differ\n", "t\tb.bin", "t\tb.bin"},
		{"one side quoted", "diff --git a/x.go \"b/\\\"y\\\".go\"\nsimilarity index 100%\nrename from x.go\nrename to \"\\\"y\\\".go\"\n", "x.go", `"y".go`},
		{"spaces", "diff --git a/my file.go b/my file.go\nold mode 100644\nnew mode 100755\n", "my file.go", "my file.go"},
		{"no prefix", "diff --git x.go x.go\nold mode 100644\nnew mode 100755\n", "x.go", "x.go"},
		{"no prefix, with hunks", "diff --git x.go x.go\n--- x.go\n+++ x.go\n@@ -1 +1 @@\n-a\n+b\n", "x.go", "x.go"},
		{"new empty file", "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n", "", "e"},
		{"deleted empty file", "diff --git a/e b/e\ndeleted file mode 100644\nindex e69de29..0000000\n", "e", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := mustParse(t, c.patch)
			if len(files) != 1 || files[0].OldPath != c.old || files[0].NewPath != c.new {
				t.Errorf("files = %+v, want %q → %q", files, c.old, c.new)
			}
		})
	}
}

func TestParseLineEnds(t *testing.T) {
	crlf := strings.ReplaceAll(sampleDiff, "\n", "\r\n")
	if got, want := mustParse(t, crlf), mustParse(t, sampleDiff); !reflect.DeepEqual(got, want) {
		t.Errorf("CRLF:\n%+v\nwant\n%+v", got, want)
	}
	noEOL := strings.TrimSuffix(sampleDiff, "\n")
	if got, want := mustParse(t, noEOL), mustParse(t, sampleDiff); !reflect.DeepEqual(got, want) {
		t.Errorf("without a final line end:\n%+v\nwant\n%+v", got, want)
	}
	for _, text := range []string{"", "\n", "just text\n", "@@ -1 +1 @@\n-a\n+b\n"} {
		if files, err := Parse(text); err != nil || len(files) != 0 {
			t.Errorf("Parse(%q) = %+v, %v", text, files, err)
		}
	}
}

func TestParseNoNewline(t *testing.T) {
	patch := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n"
	files := mustParse(t, patch)
	if len(files) != 2 {
		t.Fatalf("files = %+v", files)
	}
	want := []Line{{Kind: ' ', Text: "a", OldLine: 1, NewLine: 1}, {Kind: '-', Text: "b", OldLine: 2}, {Kind: '+', Text: "c", NewLine: 2}}
	if got := files[0].Hunks[0].Lines; !reflect.DeepEqual(got, want) {
		t.Errorf("lines = %+v, want %+v", got, want)
	}
}

func TestParseEmptyLines(t *testing.T) {
	// An empty line inside a hunk is a context line whose space was lost.
	patch := "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n\n-b\n+c\n\n"
	files := mustParse(t, patch)
	h := files[0].Hunks[0]
	if len(h.Lines) != 5 || h.Lines[1] != (Line{Kind: ' ', OldLine: 2, NewLine: 2}) || h.Lines[4] != (Line{Kind: ' ', OldLine: 4, NewLine: 4}) {
		t.Errorf("lines = %+v", h.Lines)
	}
	// One that ends a hunk cut short is the blank line after it.
	patch = "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n a\n-b\n+c\n\nSome note.\n"
	files = mustParse(t, patch)
	if h := files[0].Hunks[0]; len(h.Lines) != 3 {
		t.Errorf("lines = %+v", h.Lines)
	}
	// Lines beyond the header's counts are not part of the hunk.
	patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n d\n"
	files = mustParse(t, patch)
	if h := files[0].Hunks[0]; len(h.Lines) != 2 {
		t.Errorf("lines = %+v", h.Lines)
	}
}

func TestLine(t *testing.T) {
	for _, c := range []struct {
		l              Line
		added, removed bool
		n              int
	}{
		{Line{Kind: '+', NewLine: 4}, true, false, 4},
		{Line{Kind: '-', OldLine: 7}, false, true, 7},
		{Line{Kind: ' ', OldLine: 7, NewLine: 9}, false, false, 9},
	} {
		if c.l.Added() != c.added || c.l.Removed() != c.removed || c.l.Number() != c.n {
			t.Errorf("%+v: Added %v, Removed %v, Number %d", c.l, c.l.Added(), c.l.Removed(), c.l.Number())
		}
	}
}
