package unidiff

import (
	"fmt"
	"strings"
	"testing"
)

// Undo rebuilds the file before a diff from the file after it, across
// hunks that delete, change and add lines, and refuses a diff that does
// not match the file.
func TestUndo(t *testing.T) {
	t.Parallel()
	var old []string
	for i := 1; i <= 40; i++ {
		old = append(old, fmt.Sprintf("line %d", i))
	}
	after := append([]string{}, old[:2]...) // line 3 deleted
	after = append(after, old[3:19]...)
	after = append(after, "changed", "and added") // line 20 changed
	after = append(after, old[20:]...)
	after = append(after, "appended")
	before, now := strings.Join(old, "\n")+"\n", strings.Join(after, "\n")+"\n"
	diff := `--- a/notes.txt
+++ b/notes.txt
@@ -1,4 +1,3 @@
 line 1
 line 2
-line 3
 line 4
@@ -19,3 +18,4 @@
 line 19
-line 20
+changed
+and added
 line 21
@@ -40 +40,2 @@
 line 40
+appended
`
	files := mustParse(t, diff)
	if len(files) != 1 || len(files[0].Hunks) != 3 {
		t.Fatalf("want one file of three hunks: %+v", files)
	}
	got, err := files[0].Undo(now)
	if err != nil {
		t.Fatal(err)
	}
	if got != before {
		t.Errorf("Undo =\n%s\nwant\n%s", got, before)
	}
	if _, err := files[0].Undo(strings.Replace(now, "changed", "other", 1)); err == nil {
		t.Error("Undo of a file the diff does not match: no error")
	}
}

func TestVerb(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    File
		want string
	}{
		{File{NewPath: "a"}, "adds"},
		{File{OldPath: "a"}, "deletes"},
		{File{OldPath: "a", NewPath: "b"}, "renames"},
		{File{OldPath: "a", NewPath: "a"}, "edits"},
	} {
		if got := c.f.Verb(); got != c.want {
			t.Errorf("Verb of %+v = %s, want %s", c.f, got, c.want)
		}
	}
}
