package golang

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/testrun"
)

// writeFiles writes files (path: content) under a new directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The tests a fix's changed files define are read from its _test.go files:
// top-level tests and examples with an output comment, named by import
// path, each once and sorted; other files, deleted ones and ones that do
// not parse are passed over.
func TestTestsInFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a_test.go": "package m\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\nfunc Testlower(t *testing.T) {}\nfunc helper(t *testing.T) {}\n" +
			"func Example() {\n\t// Output: x\n}\nfunc ExampleQuiet() {}\nfunc (s) TestMethod(t *testing.T) {}\n",
		"x/b_test.go": "package x\n\nimport \"testing\"\n\nfunc Test(t *testing.T) {}\nfunc TestB_sub(t *testing.T) {}\nfunc ExampleB() {\n\t// Unordered output: y\n}\n",
		"x/c_test.go": "package x\n\nfunc TestBroken(t *testing.T) {\n",
		"x/b.go":      "package x\n\nfunc TestNotATest(t int) {}\n",
	})
	got, err := Driver{}.TestsInFiles(dir, []string{"a_test.go", "x/b_test.go", "x/c_test.go", "x/b.go", "x/gone_test.go", "README.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.com/m.Example", "example.com/m.TestA", "example.com/m/x.ExampleB", "example.com/m/x.Test", "example.com/m/x.TestB_sub"}
	if !slices.Equal(got, want) {
		t.Errorf("TestsInFiles = %q, want %q", got, want)
	}
	if _, err := (Driver{}).TestsInFiles(t.TempDir(), []string{"a_test.go"}); err == nil || !strings.HasPrefix(err.Error(), "no go.mod at the module root: ") {
		t.Errorf("without a go.mod: %v", err)
	}
}

// Packages run by directory: the module's own as ".", its others as
// "./x", another module's as they are; a target by its directory.
func TestRunPackageNames(t *testing.T) {
	dir := writeFiles(t, map[string]string{"go.mod": "module example.com/m\n"})
	got, err := Driver{}.RunPackageNames(dir, []string{"example.com/m", "example.com/m/x/y", "example.com/other", "example.com/mx"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "./x/y", "example.com/other", "example.com/mx"}; !slices.Equal(got, want) {
		t.Errorf("RunPackageNames = %q, want %q", got, want)
	}
	if _, err := (Driver{}).RunPackageNames(t.TempDir(), nil); err == nil {
		t.Error("no error without a go.mod")
	}
	if got := (Driver{}).TargetPackage(testrun.Target{ImportPath: "example.com/m/x", Dir: "./x", Test: "TestX"}); got != "./x" {
		t.Errorf("TargetPackage = %q, want ./x", got)
	}
}

// A commit is mined with a go.mod; a build that names a module version
// the setup did not fetch is the environment's.
func TestMiningRules(t *testing.T) {
	if name, why := (Driver{}).RequiredRootFile(); name != "go.mod" || why == "" {
		t.Errorf("RequiredRootFile = %q, %q", name, why)
	}
	for line, want := range map[string]bool{
		"x.go:3:2: example.com/dep@v1.2.0: module lookup disabled by GOPROXY=off":                               true,
		"no required module provides package example.com/x; cannot find module providing package example.com/x": true,
		"go: reading example.com/dep/@v/v1.2.0.mod: 404 Not Found":                                              true,
		"verifying example.com/dep@v1.2.0: checksum: dial tcp: lookup sum.example: no such host":                true,
		"./x.go:3:2: undefined: Foo": false,
		"--- FAIL: TestX (0.00s)":    false,
	} {
		if got := (Driver{}).UnfetchedDependency(line); got != want {
			t.Errorf("UnfetchedDependency(%q) = %v, want %v", line, got, want)
		}
	}
}
