package keep

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// countingFixes counts the passes made over a real store.
type countingFixes struct {
	*store.Store
	passes atomic.Int32
}

func (c *countingFixes) OpenFixes(ctx context.Context, limit int) ([]task.Fix, error) {
	c.passes.Add(1)
	return c.Store.OpenFixes(ctx, limit)
}

// TestRunTakesTurns: of two replicas sharing the store, one makes the
// interval's pass; Run returns when its context ends.
func TestRunTakesTurns(t *testing.T) {
	st := store.New(embeddedtest.Redis(t), "test")
	fixes := &countingFixes{Store: st}
	for _, owner := range []string{"a", "b"} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			(&Keeper{Fixes: fixes, Turns: st, Owner: owner, Log: zaptest.NewLogger(t)}).Run(ctx, time.Hour)
		}()
		if owner == "a" {
			testsvc.Poll(t, 30*time.Second, "replica a makes the pass", func() bool { return fixes.passes.Load() == 1 })
		}
		cancel()
		testsvc.Receive(t, 30*time.Second, "Run returns once its context ended", done)
	}
	if n := fixes.passes.Load(); n != 1 {
		t.Errorf("%d passes in one interval between two replicas, want 1", n)
	}
}

// TestPassSkipsAFixWhoseTaskIsGone: a pull request whose task's retention
// has passed has no failing tests to run: the pass leaves it, and counts
// no error.
func TestPassSkipsAFixWhoseTaskIsGone(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "test")
	if _, err := st.RecordPublished(ctx, task.Fix{Repo: "acme/calc", Number: 1, TaskID: "swept"}); err != nil {
		t.Fatal(err)
	}
	k := &Keeper{Fixes: st, Log: zaptest.NewLogger(t)} // no forges, no checkouts: nothing else may be reached
	if c, err := k.Pass(ctx); err != nil || c != (Counts{Open: 1}) {
		t.Errorf("pass: %+v, %v", c, err)
	}
}

func TestWindow(t *testing.T) {
	var fixes []task.Fix
	for _, n := range []int{5, 1, 4, 2, 3} {
		fixes = append(fixes, task.Fix{Repo: "o/a", Number: n})
	}
	numbers := func(fs []task.Fix) (out []int) {
		for _, f := range fs {
			out = append(out, f.Number)
		}
		return out
	}
	for _, c := range []struct {
		start, limit int
		want         []int
	}{
		{0, 2, []int{1, 2}},
		{2, 2, []int{3, 4}},
		{4, 2, []int{5, 1}}, // round
		{7, 3, []int{3, 4, 5}},
		{0, 5, []int{5, 1, 4, 2, 3}}, // all fit: as listed
	} {
		if got := numbers(window(slices.Clone(fixes), c.start, c.limit)); !slices.Equal(got, c.want) {
			t.Errorf("window from %d of %d: %v, want %v", c.start, c.limit, got, c.want)
		}
	}
}
