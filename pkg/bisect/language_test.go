package bisect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/testrun"
)

// declaring is a language whose checkouts declare the tests their
// tests.txt lists, one a line.
type declaring struct{}

func (declaring) Setup(context.Context, string) error { return nil }

func (declaring) Resolve(_, id string) (testrun.Target, error) {
	return testrun.Target{ID: id, ImportPath: "tests.txt", Dir: ".", Test: id}, nil
}

func (declaring) DeclaresTest(dir, id string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "tests.txt"))
	return err == nil && strings.Contains("\n"+string(data), "\n"+id+"\n")
}

// When no run at the culprit's parent says whether the tests were there
// (it could not be tested), the language says, from a checkout of the
// parent: a test it declares was there (not added), another was not.
func TestAddedTestAsksTheLanguage(t *testing.T) {
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	parent := f.Commit("tests", map[string]string{"tests.txt": "test_there\n"})
	f.Commit("more tests", map[string]string{"tests.txt": "test_there\ntest_new\n"})
	pool, err := newWorktrees(ctx, gitrepo.Repo{Dir: f.Dir}, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.close(ctx)
	for test, want := range map[string]bool{"test_there": false, "test_new": true} {
		pr := &gitProber{lang: declaring{}, tests: []string{test}, slots: pool.slots, log: zap.NewNop()}
		if got := addedTest(ctx, pr, parent, []Result{ResultSkip}); got != want {
			t.Errorf("%s: added = %v, want %v", test, got, want)
		}
	}
	// A run that said something decides, without a checkout.
	pr := &gitProber{lang: declaring{}, tests: []string{"test_new"}, log: zap.NewNop()}
	if addedTest(ctx, pr, parent, []Result{ResultFail}) || !addedTest(ctx, pr, parent, []Result{ResultMissing}) {
		t.Error("the parent's results are not what decides")
	}
}
