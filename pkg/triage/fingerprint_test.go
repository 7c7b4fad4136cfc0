package triage

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
)

// panicOutput is a panic's test output as go test prints it, with the
// parts that change between runs as parameters.
func panicOutput(addr, goroutine, root string, line int, fn string) string {
	return "=== RUN   TestDiv\n--- FAIL: TestDiv (0.00s)\n" +
		"panic: runtime error: integer divide by zero [recovered]\n\n" +
		"goroutine " + goroutine + " [running]:\n" +
		"testing.tRunner.func1.2({0x55a7a0, " + addr + "})\n\t/usr/local/go/src/testing/testing.go:1974 +0x232\n" +
		"panic({0x55a7a0?, " + addr + "?})\n\t/usr/local/go/src/runtime/panic.go:860 +0x13a\n" +
		"example.com/calc/calc." + fn + "(...)\n\t" + root + "/calc/calc.go:" + itoa(line) + "\n" +
		"example.com/calc/calc.TestDiv(" + addr + ")\n\t" + root + "/calc/calc_test.go:21 +0x1d\n"
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func failure(test, output string) task.Failure {
	f := task.Failure{Package: "example.com/calc/calc", Test: test, Output: output}
	f.Frames = golang.Frames(output, 5)
	f.Message = golang.Message(output)
	return f
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/acme/calc"
	assert := func(test, msg string, frames ...string) task.Failure {
		return task.Failure{Package: "example.com/calc/calc", Test: test, Message: msg, Frames: frames}
	}
	for _, c := range []struct {
		name  string
		repoA string
		a     task.Failure
		repoB string
		b     task.Failure
		same  bool
	}{
		{
			name: "panic in another checkout, run and line",
			a:    failure("TestDiv", panicOutput("0xc000012345", "7", "/home/runner/work/calc", 9, "Div")),
			b:    failure("TestDiv", panicOutput("0xc0000abcde", "31", "/tmp/redfix-ws-123/repo", 12, "Div")),
			same: true,
		},
		{
			name: "panic in another function of the same file",
			a:    failure("TestDiv", panicOutput("0xc000012345", "7", "/w", 9, "Div")),
			b:    failure("TestDiv", panicOutput("0xc000012345", "7", "/w", 9, "Mod")),
		},
		{
			name: "durations and temp dirs",
			a:    assert("TestLoad", "load /tmp/TestLoad1234/001/cfg.yaml took 1.503s, want < 1s", "load_test.go:30"),
			b:    assert("TestLoad", "load /tmp/TestLoad98/002/cfg.yaml took 2m3.1s, want < 1s", "load_test.go:31"),
			same: true,
		},
		{
			name: "ports, timestamps, uuids and hashes",
			a:    assert("TestServe", "dial 127.0.0.1:40123 at 2026-11-22T10:00:01Z: request 9b2f6c1e-0d3a-4b5c-8e7f-0123456789ab for commit 3f9a2b1c refused"),
			b:    assert("TestServe", "dial 127.0.0.1:35555 at 2026-11-23T08:30:59.5+01:00: request 11111111-2222-4333-8444-555555555555 for commit a0b1c2d3e4 refused"),
			same: true,
		},
		{
			name: "same assertion, other values",
			a:    assert("TestAdd", "Add(1, 2) = -1, want 3", "calc_test.go:8"),
			b:    assert("TestAdd", "Add(1, 2) = 4, want 3", "calc_test.go:8"),
			same: true,
		},
		{
			name: "another assertion of the same test",
			a:    assert("TestAdd", "Add(1, 2) = -1, want 3", "calc_test.go:8"),
			b:    assert("TestAdd", "Add overflowed: got negative sum", "calc_test.go:12"),
		},
		{
			name: "same message, another quoted name",
			a:    assert("TestConfig", `missing key "timeout"`),
			b:    assert("TestConfig", `missing key "retries"`),
		},
		{
			name: "same message, another file",
			a:    assert("TestAdd", "Add(1, 2) = -1, want 3", "calc_test.go:8"),
			b:    assert("TestAdd", "Add(1, 2) = -1, want 3", "helpers_test.go:8"),
		},
		{
			name: "same failure, another test",
			a:    assert("TestAdd", "Add(1, 2) = -1, want 3"),
			b:    assert("TestAdd/small", "Add(1, 2) = -1, want 3"),
		},
		{
			name:  "same failure, another repository",
			a:     assert("TestAdd", "Add(1, 2) = -1, want 3"),
			repoB: "https://github.com/acme/other",
			b:     assert("TestAdd", "Add(1, 2) = -1, want 3"),
		},
		{
			name:  "same repository spelled with .git and a slash",
			repoA: "https://github.com/acme/calc.git",
			a:     assert("TestAdd", "Add(1, 2) = -1, want 3"),
			repoB: "https://github.com/acme/calc/",
			b:     assert("TestAdd", "Add(1, 2) = -1, want 3"),
			same:  true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ra, rb := c.repoA, c.repoB
			if ra == "" {
				ra = repo
			}
			if rb == "" {
				rb = repo
			}
			fa, fb := Fingerprint(ra, c.a), Fingerprint(rb, c.b)
			if fa != Fingerprint(ra, c.a) {
				t.Fatal("Fingerprint is not deterministic")
			}
			if len(fa) != 32 {
				t.Errorf("fingerprint %q is not 32 hex digits", fa)
			}
			if (fa == fb) != c.same {
				t.Errorf("same = %v, want %v\n a: %q %q\n b: %q %q", fa == fb, c.same,
					NormalizeMessage(c.a.Message), frameKeys(c.a), NormalizeMessage(c.b.Message), frameKeys(c.b))
			}
		})
	}
}

func TestNormalizeMessage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Add(1, 2) = -1, want 3":                          "Add(N, N) = N, want N",
		"invalid utf8 in Test2 of v2":                     "invalid utf8 in Test2 of v2",
		"deadbeef cafe facade":                            "deadbeef cafe facade",
		"open /tmp/TestX1/001/a.txt: no such file":        "open <tmp>: no such file",
		"read /home/me/tmp/a.txt: denied":                 "read /home/me/tmp/a.txt: denied",
		"ptr 0xc000123abc != 0xc000456def":                "ptr 0x? != 0x?",
		"index out of range [5] with length 3":            "index out of range [N] with length N",
		"took 150ms\n\tthen   1.5s":                       "took <dur> then <dur>",
		"goroutine 42 [running]: deadlock after 3 rounds": "goroutine N [running]: deadlock after N rounds",
	} {
		if got := NormalizeMessage(in); got != want {
			t.Errorf("NormalizeMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGroupFailures(t *testing.T) {
	t.Parallel()
	a1 := task.Failure{Package: "p", Test: "TestA", Message: "got 1, want 2"}
	b := task.Failure{Package: "p", Test: "TestB", Message: "got 1, want 2"}
	a2 := task.Failure{Package: "p", Test: "TestA", Message: "got 7, want 2"} // a second run
	a3 := task.Failure{Package: "p", Test: "TestA", Message: "nil map"}
	groups := GroupFailures("r", []task.Failure{a1, b, a2, a3})
	if len(groups) != 3 {
		t.Fatalf("groups = %+v", groups)
	}
	if len(groups[0].Failures) != 2 || groups[0].Fingerprint != Fingerprint("r", a2) {
		t.Errorf("the two runs of TestA are not one group: %+v", groups[0])
	}
	if got := groups[0].Tests(); len(got) != 1 || got[0] != "p.TestA" {
		t.Errorf("Tests() = %q", got)
	}
	if groups[1].Failures[0].Test != "TestB" || groups[2].Failures[0].Message != "nil map" {
		t.Errorf("groups out of order: %+v", groups)
	}
}
