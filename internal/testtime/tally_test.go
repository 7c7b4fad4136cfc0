package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The real go test's events of a module with a passing test, a failing one
// (with a failing subtest) and a package that does not build: the echo is
// what go test prints without -json, and the tally has every top-level
// test and package.
func TestReadRealGoTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestQuiet(t *testing.T) { t.Log("quiet-log") }

func TestLoud(t *testing.T) {
	t.Log("loud-log")
	t.Run("sub", func(t *testing.T) { t.Error("sub-broke") })
}
`,
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { undefined() }\n",
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	events, err := cmd.Output()
	if err == nil {
		t.Fatal("go test of a failing module passed")
	}
	var out bytes.Buffer
	tl, err := Read(bytes.NewReader(events), &out)
	if err != nil {
		t.Fatal(err)
	}
	echo := out.String()
	for _, want := range []string{"loud-log", "sub-broke", "--- FAIL: TestLoud", "undefined: undefined", "ok  \texample.com/m/c", "FAIL\texample.com/m/a"} {
		if !strings.Contains(echo, want) {
			t.Errorf("echo lacks %q:\n%s", want, echo)
		}
	}
	if strings.Contains(echo, "quiet-log") || strings.Contains(echo, "=== RUN   TestC") || strings.Contains(echo, "\nPASS\n") {
		t.Errorf("echo shows a passing test's output:\n%s", echo)
	}
	var tests []string
	for _, tm := range tl.Tests {
		tests = append(tests, tm.Test+":"+tm.Action)
	}
	// go test runs the packages at once: their events come in any order.
	slices.Sort(tests)
	if got := strings.Join(tests, " "); got != "TestC:pass TestLoud:fail TestQuiet:pass" {
		t.Errorf("top-level tests: %s", got)
	}
	if len(tl.Packages) != 3 || !tl.Failed {
		t.Errorf("packages: %+v, failed %v", tl.Packages, tl.Failed)
	}
	var report bytes.Buffer
	tl.Print(&report, 2)
	if !strings.Contains(report.String(), "The 2 slowest tests (of 3)") || !strings.Contains(report.String(), "The 2 slowest packages (of 3;") ||
		!strings.Contains(report.String(), "The 2 packages that ended last") {
		t.Errorf("report:\n%s", report.String())
	}
}

// A package that dies with tests running (a timeout, a panic) shows their
// output; lines that are no events are echoed.
func TestReadUnfinishedTestsOfAFailedPackage(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`go: downloading example.com/x v1.0.0`,
		`{"Action":"run","Package":"p","Test":"TestHang"}`,
		`{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}`,
		`{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 1s\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t1.0s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":1.0}`,
	}, "\n")
	var out bytes.Buffer
	tl, err := Read(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := "go: downloading example.com/x v1.0.0\nFAIL\tp\t1.0s\n=== RUN   TestHang\npanic: test timed out after 1s\n"
	if out.String() != want {
		t.Errorf("echo:\n%s\nwant:\n%s", out.String(), want)
	}
	if len(tl.Packages) != 1 || tl.Packages[0].Elapsed != time.Second || tl.Packages[0].Action != "fail" {
		t.Errorf("packages: %+v", tl.Packages)
	}
}

func TestSlowest(t *testing.T) {
	t.Parallel()
	ts := []Timing{{Test: "a", Elapsed: 1}, {Test: "b", Elapsed: 3}, {Test: "c", Elapsed: 2}}
	got := Slowest(ts, 2)
	if len(got) != 2 || got[0].Test != "b" || got[1].Test != "c" {
		t.Errorf("Slowest = %+v", got)
	}
	if ts[0].Test != "a" {
		t.Error("Slowest reordered its argument")
	}
}

// The command's status is the run's: 0 when every package passed, 1 when
// one failed or none was reported (go test did not start), whatever the
// shell does with a pipeline's status.
func TestStatusIsTheRuns(t *testing.T) {
	t.Parallel()
	pass := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"p","Elapsed":0.2}
`
	fail := pass + `{"Action":"fail","Package":"q","Elapsed":0.3}
`
	for _, c := range []struct {
		name, in string
		want     int
	}{{"passed", pass, 0}, {"failed", fail, 1}, {"nothing", "go: cannot find main module\n", 1}} {
		var out, errs bytes.Buffer
		if got := run(nil, strings.NewReader(c.in), &out, &errs); got != c.want {
			t.Errorf("%s: status %d, want %d\n%s%s", c.name, got, c.want, out.String(), errs.String())
		}
	}
}

// The tail: the packages that ended last, latest first, with when each
// began and ended from the first package's start.
func TestPrintsThePackagesThatEndedLast(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"Time":"2026-12-08T01:00:00Z","Action":"start","Package":"long"}`,
		`{"Time":"2026-12-08T01:00:05Z","Action":"start","Package":"short"}`,
		`{"Time":"2026-12-08T01:00:15Z","Action":"pass","Package":"short","Elapsed":10}`,
		`{"Time":"2026-12-08T01:00:20Z","Action":"start","Package":"late"}`,
		`{"Time":"2026-12-08T01:00:30Z","Action":"pass","Package":"late","Elapsed":10}`,
		`{"Time":"2026-12-08T01:02:00Z","Action":"pass","Package":"long","Elapsed":120}`,
	}, "\n")
	tl, err := Read(strings.NewReader(in), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	tl.Print(&report, 2)
	want := "The 2 packages that ended last (seconds from the first start: began, ended):\n" +
		"       0    120  long\n" +
		"      20     30  late\n"
	if !strings.HasSuffix(report.String(), want) {
		t.Errorf("report:\n%s\nwant it to end with:\n%s", report.String(), want)
	}
}
