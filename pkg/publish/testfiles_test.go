package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// testFilesFunc is a rule for files of tests written in the test.
type testFilesFunc func(rel string) bool

func (f testFilesFunc) IsTestFile(rel string) bool { return f(rel) }

// The failing test's link is looked for in the files the language's rule
// calls tests only: a rule that calls none links no test, and one that
// calls the test's file links its declaration.
func TestGitHubPublishLinksTestsInTheRulesFilesOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		rule TestFiles
		link bool
	}{
		{"no file is a test", testFilesFunc(func(string) bool { return false }), false},
		{"no rule", nil, false},
		{"the test's file is one", testFilesFunc(func(rel string) bool { return rel == "calc/calc_test.go" }), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newGHFixture(t)
			pub, _ := f.publisher(t)
			pub.Tests = c.rule
			if _, err := pub.Publish(context.Background(), f.pr(task.GateNotRun)); err != nil {
				t.Fatal(err)
			}
			p := f.pulls()
			if len(p) != 1 {
				t.Fatalf("%d pull requests, want 1", len(p))
			}
			linked := "### [`example.com/calc/calc.TestAdd`](" + f.srv.HTMLURL(f.owner, f.name) + "/blob/" + f.head + "/calc/calc_test.go#L5)"
			plain := "### `example.com/calc/calc.TestAdd`\n"
			if got := strings.Contains(p[0].Body, linked); got != c.link {
				t.Errorf("the test is linked: %v, want %v:\n%s", got, c.link, p[0].Body)
			}
			if !c.link && !strings.Contains(p[0].Body, plain) {
				t.Errorf("body lacks the unlinked heading %q:\n%s", plain, p[0].Body)
			}
		})
	}
}
