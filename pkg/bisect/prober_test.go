package bisect

import (
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/task"
)

// Runs are kept per (commit, test) across searches: a second bisection of
// the same failure reuses them.
func TestBisectReusesCachedRuns(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	cache := bisecttest.NewRunCache()
	first, err := Bisector{Lang: goLang, Cache: cache}.Bisect(ctx, f.Dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Bisector{Lang: goLang, Cache: cache}.Bisect(ctx, f.Dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Blame != shas[6] || second.Blame != shas[6] {
		t.Errorf("blames %s, %s, want %s", task.Short(first.Blame), task.Short(second.Blame), task.Short(shas[6]))
	}
	if first.CachedRuns != 0 || second.CachedRuns != first.Steps {
		t.Errorf("cached runs %d then %d, want 0 then %d", first.CachedRuns, second.CachedRuns, first.Steps)
	}
	// Only the verification at bad is run again.
	if second.Steps != 1 {
		t.Errorf("second search ran %d times, want 1", second.Steps)
	}
}
