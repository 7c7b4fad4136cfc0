package stream

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

func TestDepthCountsWaitingAndHeldAndDatesTheOldest(t *testing.T) {
	ctx := context.Background()
	s := open(t, testConfig())
	d, err := s.Depth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Lag != 0 || !d.Oldest.IsZero() {
		t.Fatalf("empty stream: %+v", d)
	}
	before := time.Now().Add(-time.Second)
	publish(t, s, "a", "first")
	publish(t, s, "b", "second")
	held := next(t, s) // delivered, not settled: still counted
	if d, err = s.Depth(ctx); err != nil {
		t.Fatal(err)
	}
	if d.Lag != 2 || d.Oldest.Before(before) || d.Oldest.After(time.Now().Add(time.Second)) {
		t.Fatalf("two messages, one held: %+v (published after %s)", d, before)
	}
	if err := held.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	second := next(t, s)
	if err := second.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	testsvc.Poll(t, 2*time.Minute, "the stream empties once both are acked", func() bool {
		d, err := s.Depth(ctx)
		return err == nil && d.Lag == 0 && d.Oldest.IsZero()
	})
}
