package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	if got := strings.Join(tests, " "); got != "TestQuiet:pass TestLoud:fail TestC:pass" {
		t.Errorf("top-level tests: %s", got)
	}
	if len(tl.Packages) != 3 {
		t.Errorf("packages: %+v", tl.Packages)
	}
	var report bytes.Buffer
	tl.Print(&report, 2)
	if !strings.Contains(report.String(), "The 2 slowest tests (of 3)") || !strings.Contains(report.String(), "The 2 slowest packages (of 3;") {
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
