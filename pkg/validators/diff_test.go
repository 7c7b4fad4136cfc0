package validators

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDiff(t *testing.T) {
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
	got, err := ParseDiff(patch)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{OldPath: "a.go", NewPath: "a.go", Lines: []DiffLine{{Added: false, Line: 3, Text: "func A() int { return 1 }"}, {Added: true, Line: 3, Text: "func A() int { return 2 }"}}},
		{NewPath: "new.go", Lines: []DiffLine{{Added: true, Line: 1, Text: "package a"}, {Added: true, Line: 2, Text: "// --- not a header"}}},
		{OldPath: "old_test.go", Lines: []DiffLine{{Line: 1, Text: "package a"}}},
		{OldPath: "x/b.go", NewPath: "y/b.go"},
		{OldPath: "img.png", NewPath: "img.png", Binary: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseDiff =\n%+v\nwant\n%+v", got, want)
	}
	if p := got[3].Paths(); !reflect.DeepEqual(p, []string{"x/b.go", "y/b.go"}) {
		t.Errorf("Paths of a rename = %v", p)
	}
}

func TestParseDiffPlain(t *testing.T) {
	patch := "--- a.go\t2024-01-01\n+++ a.go\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n--- b.go\n+++ b.go\n@@ -1,0 +1 @@\n+z\n"
	got, err := ParseDiff(patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path() != "a.go" || got[1].Path() != "b.go" || len(got[0].Lines) != 2 || len(got[1].Lines) != 1 {
		t.Fatalf("ParseDiff = %+v", got)
	}
	if _, err := ParseDiff("diff --git a/a b/a\n@@ -x +1 @@\n"); err == nil || !strings.Contains(err.Error(), "hunk header") {
		t.Errorf("malformed hunk: err = %v", err)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		ok         bool
	}{
		{"pkg/**", "pkg/a/b.go", true},
		{"pkg", "pkg/a/b.go", true},
		{"pkg/*.go", "pkg/a.go", true},
		{"pkg/*.go", "lib/a.go", false},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "c.go", true},
		{"**/*.go", "README.md", false},
		{"internal/*/x.go", "internal/a/x.go", true},
		{"internal/*/x.go", "internal/a/b/x.go", false},
	} {
		v := New(nil, Config{AllowedPaths: []string{c.glob}}, nil)
		if got := v.allowed(c.path); got != c.ok {
			t.Errorf("allowed(%q) with %q = %v, want %v", c.path, c.glob, got, c.ok)
		}
	}
}
