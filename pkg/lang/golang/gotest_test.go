package golang

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/testrun"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct{ id, pkg, test string }{
		{"TestParse", "", "TestParse"},
		{"TestParse/empty", "", "TestParse/empty"},
		{"example.com/m/calc.TestAdd", "example.com/m/calc", "TestAdd"},
		{"example.com/m/calc.TestAdd/a.TestB", "example.com/m/calc", "TestAdd/a.TestB"},
		{"example.Testing.com/m.TestX", "example.Testing.com/m", "TestX"},
	} {
		pkg, test := split(c.id)
		if pkg != c.pkg || test != c.test {
			t.Errorf("split(%q) = %q, %q; want %q, %q", c.id, pkg, test, c.pkg, c.test)
		}
	}
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func module(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":             "module example.com/m\n\ngo 1.22\n",
		"a/a.go":             "package a\n\nfunc Add(x, y int) int { return x - y }\n",
		"a/a_test.go":        "package a\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tt.Run(\"small\", func(t *testing.T) {\n\t\tif Add(1, 2) != 3 {\n\t\t\tt.Fatalf(\"Add(1, 2) = %d\", Add(1, 2))\n\t\t}\n\t})\n}\n\nfunc TestOK(t *testing.T) {}\n",
		"b/b.go":             "package b\n",
		"b/b_test.go":        "package b\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
		"c/c_test.go":        "package c\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
		"testdata/x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n",
	})
	return dir
}

func TestResolve(t *testing.T) {
	dir := module(t)
	got, err := Resolve(dir, "TestAdd/small")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "example.com/m/a.TestAdd/small" || got.Dir != "./a" || got.Func() != "TestAdd" {
		t.Fatalf("Resolve = %+v", got)
	}
	if _, err := Resolve(dir, "TestOK"); !errors.Is(err, testrun.ErrAmbiguous) {
		t.Fatalf("TestOK is in two packages: err = %v", err)
	}
	if _, err := Resolve(dir, "TestNope"); !errors.Is(err, testrun.ErrNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if got, err := Resolve(dir, "example.com/m/b.TestOK"); err != nil || got.Dir != "./b" {
		t.Fatalf("Resolve full id = %+v, %v", got, err)
	}
}

func TestRunReportsPerTest(t *testing.T) {
	dir := module(t)
	var r Runner
	o, err := r.Run(context.Background(), dir, []string{"TestAdd", "example.com/m/a.TestOK"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if o.OK() || len(o.Failed) != 1 { // one entry for the failing subtest
		t.Fatalf("outcome %s, failed %+v", o.Summary(), o.Failed)
	}
	if runs := o.Runs["example.com/m/a.TestAdd/small"]; runs.Fail != 2 {
		t.Fatalf("runs of the failing subtest = %+v, want 2 failed", runs)
	}
	f := o.Failed[0]
	if f.ID() != "example.com/m/a.TestAdd/small" || f.Message != "Add(1, 2) = -1" || !slices.Equal(f.Frames, []string{"a/a_test.go:8"}) {
		t.Fatalf("failure = %+v", f)
	}
	if len(o.Missing) != 0 {
		t.Fatalf("missing %v", o.Missing)
	}

	o, err = r.Run(context.Background(), dir, []string{"example.com/m/c.TestBroken"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if o.OK() || len(o.Build) == 0 {
		t.Fatalf("a package that does not compile: %s", o.Summary())
	}
}

func TestPackageTargets(t *testing.T) {
	dir := module(t)
	got, err := Resolve(dir, "example.com/m/b")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "example.com/m/b" || got.Dir != "./b" || !got.IsPackage() {
		t.Errorf("Resolve(package) = %+v", got)
	}
	if _, err := Resolve(dir, "example.com/m/nope"); !errors.Is(err, testrun.ErrNotFound) {
		t.Errorf("Resolve(no such package) = %v, want ErrNotFound", err)
	}
	ctx := context.Background()
	// A package target passes when it builds and all its tests pass; it
	// fails on a failing test of its own, and on a build failure.
	o, err := Runner{}.Run(ctx, dir, []string{"example.com/m/b", "example.com/m/a", "example.com/m/c"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.Passed, "example.com/m/b") || slices.Contains(o.Passed, "example.com/m/a") || slices.Contains(o.Passed, "example.com/m/c") {
		t.Errorf("passed = %v, want b only", o.Passed)
	}
	if o.Runs["example.com/m/a"].Fail != 1 || o.Runs["example.com/m/c"].Fail != 1 || o.Runs["example.com/m/b"].Pass != 1 {
		t.Errorf("runs = %+v", o.Runs)
	}
	if len(o.Build) != 1 || o.Build[0].Package != "example.com/m/c" {
		t.Errorf("build = %+v, want c's", o.Build)
	}
	if len(o.Failed) == 0 || o.Failed[0].Package != "example.com/m/a" {
		t.Errorf("failed = %+v, want a's tests", o.Failed)
	}

	b, err := Runner{}.Build(ctx, dir, []string{"./a", "./c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Build) != 1 || b.Build[0].Package != "example.com/m/c" || !strings.Contains(b.Build[0].Message, "undefined: undefined") {
		t.Errorf("Build = %+v, want c's compiler error", b.Build)
	}
	if len(b.Failed) != 0 {
		t.Errorf("Build ran tests: %+v", b.Failed)
	}
}

// A test is declared where its package's test files declare its function;
// a package where its directory is.
func TestDeclaresTest(t *testing.T) {
	dir := module(t)
	for id, want := range map[string]bool{
		"example.com/m/a.TestAdd/small": true,
		"example.com/m/b.TestOK":        true,
		"example.com/m/b":               true,
		"example.com/m/b.TestAdd":       false,
		"example.com/m/z.TestAdd":       false,
		"TestNope":                      false,
	} {
		if got := (Driver{}).DeclaresTest(dir, id); got != want {
			t.Errorf("DeclaresTest(%s) = %v, want %v", id, got, want)
		}
	}
}
