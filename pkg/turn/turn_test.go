package turn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/store"
)

// Of two replicas sharing the store, the first to take the interval's turn
// has it and the other does not; without turns (one replica) every
// interval is this replica's.
func TestOneReplicaTakesTheIntervalsTurn(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "test")
	log := zaptest.NewLogger(t)
	got := []bool{
		mine(ctx, time.Hour, st, "work", "a", log),
		mine(ctx, time.Hour, st, "work", "b", log),
		mine(ctx, time.Hour, st, "work", "a", log),
		mine(ctx, time.Hour, st, "other work", "b", log),
		mine(ctx, time.Hour, nil, "work", "c", log),
	}
	want := []bool{true, false, false, true, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("turns taken %v, want %v", got, want)
		}
	}
}

// Every makes its first pass at once and returns when its context ends.
func TestEveryPassesAtOnceAndStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var passes atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Hour, nil, "work", "a", zaptest.NewLogger(t), func(context.Context) { passes.Add(1) })
	}()
	testsvc.Poll(t, 30*time.Second, "the first pass is made", func() bool { return passes.Load() == 1 })
	cancel()
	testsvc.Receive(t, 30*time.Second, "Every returns once its context ended", done)
}
