package report

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
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

// goTestJSON runs `go test -json ./...` on a tiny module with a passing
// subtest, a failing subtest, a panic and a package that does not compile.
func goTestJSON(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Errorf("got %d, want %d", 1, 2) })
}

func TestPanic(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}
`,
		// d's external test package does not compile; e imports a
		// package that does not.
		"d/d.go":       "package d\n",
		"d/d_test.go":  "package d_test\n\nimport \"testing\"\n\nfunc TestD(t *testing.T) { var unused int }\n",
		"e/e.go":       "package e\n\nimport _ \"example.com/m/e/dep\"\n",
		"e/e_test.go":  "package e\n\nimport \"testing\"\n\nfunc TestE(t *testing.T) {}\n",
		"e/dep/dep.go": "package dep\n\nvar X int = \"not an int\"\n",
		// The panic ends package a's test binary: these run in their own.
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n\nfunc TestSkip(t *testing.T) { t.Skip(\"not today\") }\n",
		"b/b.go":      "package b\n\nfunc F() int { return undefinedName }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-json", "./...")
	cmd.Dir = dir
	out, err := cmd.Output() // stdout only: the events
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("go test: %v", err)
	}
	if err == nil {
		t.Fatalf("go test passed; the module is meant to fail:\n%s", out)
	}
	return out
}

func failureByTest(fs []task.Failure, test string) (task.Failure, bool) {
	for _, f := range fs {
		if f.Test == test {
			return f, true
		}
	}
	return task.Failure{}, false
}

func TestParseGoTestJSONRealRun(t *testing.T) {
	t.Parallel()
	out := goTestJSON(t)
	res, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, out)
	}
	if res.Format != "go-test-json" {
		t.Errorf("Format = %q", res.Format)
	}
	if len(res.Failures) != 2 {
		t.Fatalf("want 2 failures (TestSub/bad, TestPanic), got %+v", res.Failures)
	}
	if _, ok := failureByTest(res.Failures, "TestSub"); ok {
		t.Errorf("the parent of a failing subtest is reported too: %+v", res.Failures)
	}
	sub, ok := failureByTest(res.Failures, "TestSub/bad")
	if !ok {
		t.Fatalf("no TestSub/bad in %+v", res.Failures)
	}
	if sub.Package != "example.com/m/a" || sub.ID() != "example.com/m/a.TestSub/bad" {
		t.Errorf("subtest failure = %+v", sub)
	}
	if sub.Message != "got 1, want 2" {
		t.Errorf("subtest Message = %q", sub.Message)
	}
	if !slices.Equal(sub.Frames, []string{"a_test.go:7"}) {
		t.Errorf("subtest Frames = %q", sub.Frames)
	}
	pan, ok := failureByTest(res.Failures, "TestPanic")
	if !ok {
		t.Fatalf("no TestPanic in %+v", res.Failures)
	}
	if !strings.HasPrefix(pan.Message, "panic: assignment to entry in nil map") {
		t.Errorf("panic Message = %q", pan.Message)
	}
	if len(pan.Frames) == 0 || !strings.HasSuffix(pan.Frames[0], "/a/a_test.go:12") {
		t.Errorf("panic Frames = %q; want the test file first, testing and runtime left out", pan.Frames)
	}
	for _, f := range pan.Frames {
		if strings.Contains(f, "/src/testing/") || strings.Contains(f, "/src/runtime/") {
			t.Errorf("panic Frames include the runtime: %q", pan.Frames)
		}
	}
	builds := map[string]task.Failure{}
	for _, b := range res.BuildErrors {
		builds[b.Package] = b
	}
	for pkg, want := range map[string]struct{ msg, frame string }{
		"example.com/m/b":     {"undefined: undefinedName", "b/b.go:3"},
		"example.com/m/d":     {"declared and not used: unused", "d/d_test.go:5"},
		"example.com/m/e":     {`cannot use "not an int"`, "e/dep/dep.go:3"},
		"example.com/m/e/dep": {`cannot use "not an int"`, "e/dep/dep.go:3"},
	} {
		be, ok := builds[pkg]
		if !ok {
			t.Errorf("no build error for %s in %+v", pkg, res.BuildErrors)
			continue
		}
		if !strings.Contains(be.Message, want.msg) {
			t.Errorf("%s: build error Message = %q, want the compiler's %q\noutput:\n%s", pkg, be.Message, want.msg, be.Output)
		}
		if !slices.Contains(be.Frames, want.frame) {
			t.Errorf("%s: build error Frames = %q, want %s", pkg, be.Frames, want.frame)
		}
	}
	if len(res.BuildErrors) != 4 {
		t.Errorf("BuildErrors = %+v", res.BuildErrors)
	}
	if !slices.Contains(res.Passed, "example.com/m/a.TestSub/ok") || !slices.Contains(res.Passed, "example.com/m/c.TestPass") {
		t.Errorf("Passed = %q", res.Passed)
	}
	if !slices.Equal(res.Skipped, []string{"example.com/m/c.TestSkip"}) {
		t.Errorf("Skipped = %q", res.Skipped)
	}
	// TestSub, TestSub/ok, TestSub/bad, TestPanic, TestPass, TestSkip.
	if res.Total != 6 {
		t.Errorf("Total = %d, want 6", res.Total)
	}
	if !res.Failed() {
		t.Error("Failed() = false")
	}
}

func TestParseGoTestJSONAllPassing(t *testing.T) {
	t.Parallel()
	in := `{"Action":"start","Package":"example.com/m"}
{"Action":"run","Package":"example.com/m","Test":"TestA"}
{"Action":"output","Package":"example.com/m","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"example.com/m","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"example.com/m","Elapsed":0.01}
`
	res, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || res.Total != 1 || !slices.Equal(res.Passed, []string{"example.com/m.TestA"}) {
		t.Errorf("result = %+v", res)
	}
}

const nestedJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="all" tests="99" failures="99">
  <testsuite name="example.com/m/calc" tests="1" failures="0">
    <testcase classname="example.com/m/calc" name="TestAdd" time="0.01">
      <failure message="Add(1, 2) = -1, want 3" type="assertion"><![CDATA[    calc_test.go:12: Add(1, 2) = -1, want 3
]]></failure>
    </testcase>
    <testcase classname="example.com/m/calc" name="TestSub" time="0.00"/>
    <testsuite name="inner" tests="0">
      <testcase classname="example.com/m/calc/inner" name="TestDeep/case_1" time="0.02">
        <error message="Failed" type="panic">panic: runtime error: index out of range [3] with length 3

goroutine 7 [running]:
example.com/m/calc/inner.At(...)
	/home/ci/src/calc/inner/inner.go:9
example.com/m/calc/inner.TestDeep.func1(0xc000102340)
	/home/ci/src/calc/inner/inner_test.go:21 +0x1d
</error>
        <system-out>some log line</system-out>
      </testcase>
      <testcase name="TestNoClass"><skipped message="later"/></testcase>
    </testsuite>
  </testsuite>
  <testsuite name="example.com/m/broken" tests="1" errors="1">
    <testcase classname="example.com/m/broken" name="[build failed]">
      <error message="Build error">broken/broken.go:3:9: undefined: nope</error>
    </testcase>
  </testsuite>
  <testsuite name="java">
    <testcase classname="com.example.FooTest" name="testBar">
      <failure message="expected:&lt;1&gt; but was:&lt;2&gt;"/>
    </testcase>
  </testsuite>
</testsuites>
`

func TestParseJUnitNested(t *testing.T) {
	t.Parallel()
	res, err := Parse([]byte(nestedJUnit))
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "junit" {
		t.Errorf("Format = %q", res.Format)
	}
	// TestAdd, TestSub, TestDeep/case_1, TestNoClass (skipped), testBar; the
	// build failure is not a test. The suites' own counts are wrong on purpose.
	if res.Total != 5 {
		t.Errorf("Total = %d, want 5", res.Total)
	}
	if !slices.Equal(res.Passed, []string{"example.com/m/calc.TestSub"}) {
		t.Errorf("Passed = %q", res.Passed)
	}
	want := map[string]struct {
		pkg, msg string
		frames   []string
		output   string
	}{
		"TestAdd": {
			pkg: "example.com/m/calc", msg: "Add(1, 2) = -1, want 3",
			frames: []string{"calc_test.go:12"}, output: "calc_test.go:12: Add(1, 2) = -1, want 3",
		},
		// message="Failed" says nothing: the message comes from the body.
		"TestDeep/case_1": {
			pkg: "example.com/m/calc/inner", msg: "panic: runtime error: index out of range [3] with length 3",
			frames: []string{"/home/ci/src/calc/inner/inner.go:9", "/home/ci/src/calc/inner/inner_test.go:21"},
			output: "some log line",
		},
		// An attribute-only failure, entities decoded.
		"testBar": {pkg: "com.example.FooTest", msg: "expected:<1> but was:<2>"},
	}
	if len(res.Failures) != len(want) {
		t.Fatalf("Failures = %+v", res.Failures)
	}
	for _, f := range res.Failures {
		w, ok := want[f.Test]
		if !ok {
			t.Errorf("unexpected failure %+v", f)
			continue
		}
		if f.Package != w.pkg || f.Message != w.msg || !slices.Equal(f.Frames, w.frames) {
			t.Errorf("%s: got package %q message %q frames %q; want %q %q %q", f.Test, f.Package, f.Message, f.Frames, w.pkg, w.msg, w.frames)
		}
		if !strings.Contains(f.Output, w.output) {
			t.Errorf("%s: Output %q lacks %q", f.Test, f.Output, w.output)
		}
	}
	if len(res.BuildErrors) != 1 || res.BuildErrors[0].Package != "example.com/m/broken" || res.BuildErrors[0].Message != "undefined: nope" {
		t.Errorf("BuildErrors = %+v", res.BuildErrors)
	}
}

func TestParseJUnitBareSuiteErrorVsFailure(t *testing.T) {
	t.Parallel()
	in := `<testsuite name="pkg">
  <testcase name="TestErr"><error message="connection refused" type="IOError">stack here</error></testcase>
  <testcase name="TestFail"><failure>x_test.go:4: want 2</failure></testcase>
  <testcase name="TestTypeOnly"><failure type="AssertionError"/></testcase>
</testsuite>`
	res, err := ParseJUnit(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]task.Failure{}
	for _, f := range res.Failures {
		got[f.ID()] = f
	}
	if f := got["pkg.TestErr"]; f.Message != "connection refused" || !strings.Contains(f.Output, "stack here") {
		t.Errorf("error element: %+v", f)
	}
	if f := got["pkg.TestFail"]; f.Message != "want 2" || !slices.Equal(f.Frames, []string{"x_test.go:4"}) {
		t.Errorf("failure element with a body only: %+v", f)
	}
	if f := got["pkg.TestTypeOnly"]; f.Message != "AssertionError" {
		t.Errorf("failure with a type only: %+v", f)
	}
	if res.Total != 3 || len(res.Failures) != 3 {
		t.Errorf("Total = %d, failures = %d", res.Total, len(res.Failures))
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in   string
		want string // in the error
	}{
		"empty":              {in: "  \n", want: "empty"},
		"plain text":         {in: "FAIL example.com/m 0.1s\n", want: "unknown report format"},
		"unclosed element":   {in: `<testsuite name="x"><testcase name="T">`, want: "malformed XML"},
		"mismatched element": {in: `<testsuite><testcase></testsuite>`, want: "malformed XML"},
		"no testsuite":       {in: `<html><body>502 Bad Gateway</body></html>`, want: "no <testsuite>"},
		"empty testsuites":   {in: `<testsuites></testsuites>`, want: "no <testsuite>"},
		"json, not events":   {in: `{"hello": "world"}`, want: "no test events"},
		"truncated json":     {in: `{"Action":"run","Package":"p","Test":"TestA"`, want: "go test -json"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := Parse([]byte(c.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", c.in, res)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse(%q) error = %q, want it to say %q", c.in, err, c.want)
			}
		})
	}
	if _, err := Parse(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("Parse(nil) = %v, want ErrEmpty", err)
	}
}

func TestParseJUnitNoFailures(t *testing.T) {
	t.Parallel()
	res, err := Parse([]byte(`<testsuite name="p"><testcase classname="p" name="TestA"/></testsuite>`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || res.Total != 1 {
		t.Errorf("result = %+v", res)
	}
}

// A stream cut short (go test killed, or a report truncated): the tests
// that were running have no outcome and are not failures, the package is
// incomplete, and the failures that did end are kept.
func TestParseGoTestJSONIncompleteStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestA(t *testing.T) {}

func TestB(t *testing.T) { t.Log("checking"); t.Error("b is wrong") }

func TestC(t *testing.T) {
	for i := 0; i < 50; i++ {
		t.Log("line", i)
	}
}
`,
	})
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	out, _ := cmd.Output()
	lines := strings.SplitAfter(string(out), "\n")
	cut := -1
	for i, l := range lines {
		if strings.Contains(l, `"Test":"TestC"`) && strings.Contains(l, "line 20") {
			cut = i
			break
		}
	}
	if cut < 0 {
		t.Fatalf("no TestC output in:\n%s", out)
	}
	// Cut in the middle of a line, as a size limit does.
	stream := strings.Join(lines[:cut], "") + lines[cut][:len(lines[cut])/2]
	res, err := Parse([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Test != "TestB" || res.Failures[0].Message != "b is wrong" {
		t.Errorf("failures = %+v", res.Failures)
	}
	if !slices.Equal(res.NotRun, []string{"example.com/m/a.TestC"}) || !slices.Equal(res.Incomplete, []string{"example.com/m/a"}) {
		t.Errorf("not run %v, incomplete %v", res.NotRun, res.Incomplete)
	}
	if len(res.BuildErrors) != 0 || !slices.Equal(res.Passed, []string{"example.com/m/a.TestA"}) {
		t.Errorf("build errors %+v, passed %v", res.BuildErrors, res.Passed)
	}
}
