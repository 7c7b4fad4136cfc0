package publish

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// With several failing tests, the re-run evidence is shown test by test.
func TestBodyFlakinessByTest(t *testing.T) {
	tk := task.Task{
		Commit:    "0123456789abcdef",
		Failures:  []task.Failure{{Package: "example.com/m", Test: "TestA"}, {Package: "example.com/m", Test: "TestB"}},
		Flakiness: task.Flakiness{Runs: 6, Failures: 4, Verdict: "flaky"},
		FlakinessByTest: []task.TestFlakiness{
			{Test: "example.com/m.TestA", Runs: 3, Failures: 3, Verdict: "reliable"},
			{Test: "example.com/m.TestB", Runs: 3, Failures: 1, Verdict: "flaky"},
		},
	}
	body := Body(PullRequest{Task: tk, Patch: "diff --git a/x.go b/x.go\n"})
	for _, want := range []string{"- `example.com/m.TestA`: failed 3 of 3 runs (reliable)", "- `example.com/m.TestB`: failed 1 of 3 runs (flaky)"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}
