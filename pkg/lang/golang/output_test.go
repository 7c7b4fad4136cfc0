package golang

import (
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// go test's reading of an output is taken (TestOutput.ReadOutput) exactly
// when it differs from any text's: an output it leaves to the JUnit reader
// (a pytest, Surefire or jest failure's) gets the message and frames that
// go test's reading gave it when pkg/report applied it to every case.
func FuzzOutputLeftIsReadAsAnyText(f *testing.F) {
	for _, seed := range []string{
		"def test_total():\n>       assert total([1, 2]) == 4\nE       assert 3 == 4\n\ntests/test_cart.py:7: AssertionError\n",
		"java.lang.AssertionError: expected:<4> but was:<3>\n\tat org.junit.Assert.fail(Assert.java:89)\n\tat com.acme.CartTest.total(CartTest.java:42)\n",
		"Error: expect(received).toBe(expected)\n\n    at Object.<anonymous> (/src/cart.test.js:21:30)\n",
		"\n[… 120 characters omitted …]\nsecond\n",
		"[… the suite's system-out and system-err (9 bytes) are left out …]\nboom\n",
		"--- FAIL: TestX (0.00s)\n    x_test.go:12: got 3\n",
		"----- Captured stdout call -----\nhello\n",
		"=== RUN   TestX\nsomething\nFAIL\n",
		"panic: boom [recovered]\n\tpanic: boom\n\ngoroutine 7 [running]:\n",
		"calc.go:3:2: undefined: x\n",
		"",
		"  \n\t\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, out string) {
		taken := TestOutput{}.ReadOutput(&task.Failure{Output: out}, false)
		takenBuild := TestOutput{}.ReadOutput(&task.Failure{Output: out}, true)
		if taken != showsGoTest(out) || takenBuild != taken {
			t.Fatalf("ReadOutput took %q: %v (build: %v), showsGoTest: %v", out, taken, takenBuild, showsGoTest(out))
		}
		if taken {
			return
		}
		want := report.FirstLine(out)
		if got := Message(out); got != want {
			t.Errorf("Message(%q) = %q, any text's %q", out, got, want)
		}
		if got := firstMessage(out); got != want {
			t.Errorf("firstMessage(%q) = %q, any text's %q", out, got, want)
		}
		if fr, bfr := Frames(out, 5), frames(out, 5); len(fr) > 0 || len(bfr) > 0 {
			t.Errorf("frames of %q: %q and %q, any text has none", out, fr, bfr)
		}
	})
}

// A failure whose output shows go test is read as go test's, whichever
// tool wrote the report: the failing assertion's message and location.
func TestOutputShowingGoTestIsRead(t *testing.T) {
	f := task.Failure{Output: "=== RUN   TestAdd\n    calc_test.go:9: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.00s)\n"}
	report.DescribeOutput(&f, false)
	if f.Message != "Add(1, 2) = -1, want 3" || !slices.Equal(f.Frames, []string{"calc_test.go:9"}) {
		t.Errorf("read as %q at %q, want go test's assertion", f.Message, f.Frames)
	}
	b := task.Failure{Output: "# example.com/calc\ncalc.go:3:2: undefined: x\nFAIL\texample.com/calc [build failed]\n"}
	report.DescribeOutput(&b, true)
	if b.Message != "undefined: x" || !slices.Equal(b.Frames, []string{"calc.go:3"}) {
		t.Errorf("build read as %q at %q, want the compiler's first error", b.Message, b.Frames)
	}
}
