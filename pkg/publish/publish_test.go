package publish

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/task"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const samplePatch = `diff --git a/calc/calc.go b/calc/calc.go
index 3b18e51..a3c9f47 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -2,5 +2,5 @@ package calc
 
 // Add returns x+y.
 func Add(x, y int) int {
-	return x - y
+	return x + y
 }
`

// sampleTask is a task as triage makes it.
func sampleTask() task.Task {
	return task.Task{
		ID:          "task-42",
		Fingerprint: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Repo:        "/srv/repos/calc",
		Commit:      "c0ffee0123456789c0ffee0123456789c0ffee01",
		Branch:      "main",
		Failures: []task.Failure{
			{
				Package: "example.com/calc/calc",
				Test:    "TestAdd",
				Message: "calc_test.go:7: Add(1, 2) = -1, want 3",
				Output:  "=== RUN   TestAdd\n    calc_test.go:7: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.00s)\n",
				Frames:  []string{"calc_test.go:7"},
			},
			{
				Package: "example.com/calc/calc",
				Test:    "TestSum/empty",
				Message: "Sum(nil) panicked: `index out of range` <@everyone>",
				Output:  "=== RUN   TestSum/empty\npanic: runtime error: index out of range [0] with length 0 ```\n",
			},
		},
		Flakiness: task.Flakiness{Runs: 5, Failures: 5, Verdict: "reliable"},
		Bisection: task.Bisection{
			Good: "aaaaaaaaaaaa1111111111111111111111111111", Bad: "c0ffee0123456789c0ffee0123456789c0ffee01",
			Blame: "bbbbbbbbbbbb2222222222222222222222222222", Subject: "calc: add Sub and Neg",
			Author: "Jane Doe <jane@example.com>", Steps: 3, Evidence: 45.3,
		},
	}
}

func samplePR() PullRequest {
	return PullRequest{
		Task:         sampleTask(),
		Patch:        samplePatch,
		BlameSubject: "calc: add Sub and Neg",
		Summary:      "Add subtracted since bbbbbbbbbbbb; it adds again.\nSub and Neg are kept.",
		Trajectory:   []byte(`{"step":1}` + "\n" + `{"step":2}` + "\n"),
		Policy:       "offline",
		Steps:        7,
		Gates: []task.Gate{
			{Name: "integrity", Verdict: task.GatePass, Detail: "1 file(s) changed, no test, build or CI file touched", ElapsedMS: 0},
			{Name: "revert", Verdict: task.GatePass, Detail: "not a revert of bbbbbbbbbbbb: 2 of the patch's 2 changed lines | 25%.\nsecond line", ElapsedMS: 1},
			{Name: "static", Verdict: task.GatePass, Detail: "clean: go build ./..., go vet on ./calc", ElapsedMS: 850},
			{Name: "oracle", Verdict: task.GatePass, Detail: "3/3 runs passed", ElapsedMS: 1530},
			{Name: "regression", Verdict: task.GatePass, Detail: "go test ./calc: 2 tests passed", ElapsedMS: 1200},
			{Name: "judge", Verdict: task.GateNotRun, Detail: "no model configured"},
		},
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestBodyGolden(t *testing.T) {
	golden(t, "body.golden.md", Body(samplePR()))
}

func TestBodyWithoutEvidence(t *testing.T) {
	pr := PullRequest{Task: task.Task{ID: "t", Fingerprint: "abc", Commit: "c0ffee"}, Patch: samplePatch}
	golden(t, "body-bare.golden.md", Body(pr))
}

func TestBodyCapsTheDiff(t *testing.T) {
	var b strings.Builder
	b.WriteString("diff --git a/big.go b/big.go\n--- a/big.go\n+++ b/big.go\n@@ -1,0 +1,1000 @@\n")
	for i := 0; i < 1000; i++ {
		b.WriteString("+// line\n")
	}
	body := Body(PullRequest{Task: sampleTask(), Patch: b.String()})
	if !strings.Contains(body, "The diff is cut after 400 of its 1004 lines") {
		t.Error("a long diff is not cut")
	}
	if !strings.Contains(body, " big.go | 1000 ++++++++++++++++++++++++++++++++++++++++\n 1 file changed, 1000 insertions(+), 0 deletions(-)") {
		t.Errorf("diffstat of a long diff wrong:\n%s", body)
	}
	if n := strings.Count(body, "+// line"); n > maxDiffLines {
		t.Errorf("%d diff lines shown, want at most %d", n, maxDiffLines)
	}
}

func TestTitle(t *testing.T) {
	pr := samplePR()
	if got, want := Title(pr), "fix: TestAdd and 1 more fails since bbbbbbb: calc: add Sub and Neg"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	pr.BlameSubject = "calc: add Sub, Neg, Div, Mod, Pow and a long list of other functions nobody asked for"
	got := Title(pr)
	if n := utf8.RuneCountInString(got); n >= 72 || !strings.HasPrefix(got, "fix: TestAdd and 1 more fails since bbbbbbb: calc: add Sub") || !strings.HasSuffix(got, "…") {
		t.Errorf("long subject: Title = %q (%d runes)", got, n)
	}
	pr.Task.Failures = []task.Failure{{Test: "TestAVeryLongTestNameThatGoesOnAndOn/with_a_subtest_that_is_long_too"}}
	if got := Title(pr); utf8.RuneCountInString(got) >= 72 || strings.Contains(got, "calc:") {
		t.Errorf("long test name: Title = %q, want the subject dropped under 72", got)
	}
	pr.Task.Bisection = task.Bisection{}
	pr.BlameSubject = ""
	pr.Task.Failures = []task.Failure{{Test: "TestAdd"}}
	if got := Title(pr); got != "fix: TestAdd fails" {
		t.Errorf("no blame: Title = %q", got)
	}
}

func TestBranch(t *testing.T) {
	if got := Branch(sampleTask()); got != "redfix/9f86d081884c" {
		t.Errorf("Branch = %q", got)
	}
	if got := Branch(task.Task{ID: "x y"}); got != "redfix/x-y" {
		t.Errorf("Branch without fingerprint = %q", got)
	}
}

func TestBodyCapsLongDiffLines(t *testing.T) {
	long := strings.Repeat("x", 1000)
	var b strings.Builder
	b.WriteString("diff --git a/big.go b/big.go\n--- a/big.go\n+++ b/big.go\n@@ -1,0 +1,100 @@\n")
	for i := 0; i < 100; i++ {
		b.WriteString("+" + long + "\n")
	}
	body := Body(PullRequest{Task: sampleTask(), Patch: b.String()})
	if len(body) > 60000 || !strings.Contains(body, "The diff is cut after") {
		t.Errorf("body of %d bytes for a 100 KB diff; want it cut", len(body))
	}
}
