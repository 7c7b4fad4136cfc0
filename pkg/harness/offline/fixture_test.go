package offline

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// sampleDiff is a blame commit's diff as get_diff_details shows it.
const sampleDiff = `diff --git a/stats/window.go b/stats/window.go
index 1111111..2222222 100644
--- a/stats/window.go
+++ b/stats/window.go
@@ -3,7 +3,7 @@ package stats
 // Sum adds xs[lo:hi].
 func Sum(xs []int, lo, hi int) int {
 	t := 0
-	for i := lo; i < hi; i++ {
+	for i := lo; i <= hi; i++ {
 		t += xs[i]
 	}
 	return t
@@ -20,3 +20,5 @@ func Max(xs []int) int {
 	return m
 }
+
+// Extra is new.
diff --git a/stats/window_test.go b/stats/window_test.go
new file mode 100644
--- /dev/null
+++ b/stats/window_test.go
@@ -0,0 +1,2 @@
+package stats
+// test
`

// parseDiff reads a diff the test wrote.
func parseDiff(t *testing.T, text string) []unidiff.File {
	t.Helper()
	files, err := unidiff.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// modelOf is the model of a file the policy has seen whole.
func modelOf(path, src string) *fileModel {
	m := newFileModel(path, testLangs.of(path))
	for i, l := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		m.set(i+1, l)
	}
	return m
}

// diffShown is get_diff_details' observation of a commit with diff.
func diffShown(diff string) tools.Observation {
	return tools.Observation{
		Content: "commit 1234567890abcdef\nAuthor: Someone <s@example.com>\n\n    Make the window inclusive\n\n" + diff,
		Commit:  &tools.CommitResult{SHA: "1234567890abcdef", Diff: diff},
	}
}

// observeOne feeds one step to a fresh state, as if the policy had asked it.
func observeOne(t *testing.T, name string, args any, obs tools.Observation) *state {
	t.Helper()
	ep := &harness.Episode{Task: task.Task{ID: "t"}, Tools: tools.Specs(tools.All(), nil), MaxSteps: 40}
	s := newState(New(nil, testDrivers()), ep)
	s.observe(harness.Step{N: 1, Action: harness.NewAction(name, "", args), Observation: obs}, ep.Kind(name))
	return s
}
