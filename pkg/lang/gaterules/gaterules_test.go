package gaterules

import (
	"regexp"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/unidiff"
)

func TestNearestImporters(t *testing.T) {
	t.Parallel()
	importers := map[string][]string{
		"lib/a.js":       {"lib/b.js", "test/a.test.js"},
		"lib/b.js":       {"test/b.test.js", "lib/c.js"},
		"lib/c.js":       {"test/c.test.js", "test/a.test.js"},
		"test/a.test.js": {"lib/b.js"},
	}
	got := NearestImporters(importers, []string{"lib/a.js"}, func(f string) bool { return strings.HasPrefix(f, "test/") })
	if want := "test/a.test.js test/b.test.js test/c.test.js"; strings.Join(Dirs(got), " ") != want {
		t.Errorf("importers = %v, want %s", Dirs(got), want)
	}
	for _, d := range got {
		if d.Via != "lib/a.js" || d.Dir == "test/c.test.js" && d.Hops != 3 {
			t.Errorf("%+v", d)
		}
	}
}

func TestDeletedDefs(t *testing.T) {
	t.Parallel()
	files, err := unidiff.Parse("--- a/t.txt\n+++ b/t.txt\n@@ -1,3 +1,2 @@\n-test one\n-test two\n+test two\n keep\n")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^test (\w+)`)
	got := DeletedDefs(files, func(string) bool { return true }, func(l string) string {
		if m := re.FindStringSubmatch(l); m != nil {
			return m[1]
		}
		return ""
	})
	if len(got) != 1 || got[0] != "t.txt:1: deletes test one" {
		t.Errorf("deleted = %v", got)
	}
}

func TestEditedAssertions(t *testing.T) {
	t.Parallel()
	before := []Assertion{{Text: "a", First: "a", Line: 1}, {Text: "b (\n c)", First: "b (", Line: 3, Multiline: true}, {Text: "d", First: "d", Line: 9}}
	after := []Assertion{{Text: "a"}, {Text: "b (\n x)"}}
	got := EditedAssertions("t.py", before, after)
	if len(got) != 1 || got[0] != "t.py:3: removes or edits an assertion: b (" {
		t.Errorf("edited = %v (a one-line removal is the line rule's)", got)
	}
}
