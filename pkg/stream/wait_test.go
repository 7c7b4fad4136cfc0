package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/internal/testsvc"
)

// Messages that fail and wait for their retry aside do not hold the
// consumer's window: with room for two unsettled deliveries and three
// messages failing, a good message published after them is handled before
// any of them is tried again (with a Nak's delay, the two first would hold
// the window, and come back before it). Each failing message keeps its
// message ID, its first storing and its count of attempts through the
// waits, and is parked on its last attempt under its own ID.
func TestRetriesWaitAsideOffTheWindow(t *testing.T) {
	onServers(t, func(t *testing.T, js jetstream.JetStream) {
		cfg := testConfig()
		cfg.MaxAckPending, cfg.MaxDeliver, cfg.WaitAside = 2, 3, true
		cfg.RetryDelay, cfg.MaxRetryDelay = 2*time.Second, 4*time.Second
		s := openOn(t, js, cfg)
		bad := []string{"bad-1", "bad-2", "bad-3"}
		for _, id := range bad {
			publish(t, s, id, "payload of "+id)
		}
		publish(t, s, "good", "payload of good")

		type seen struct {
			id, data string
			attempt  int
			enqueued time.Time
		}
		var mu sync.Mutex
		var order []seen
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.Consume(ctx, 1, func(ctx context.Context, d *Delivery) {
				mu.Lock()
				order = append(order, seen{d.MsgID, string(d.Data()), d.Attempt, d.Enqueued})
				mu.Unlock()
				var err error
				if d.MsgID != "good" {
					err = errors.New("its repository cannot be fetched")
				}
				if _, serr := d.Settle(ctx, err); serr != nil {
					t.Errorf("settle %s: %v", d.MsgID, serr)
				}
			})
		}()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}()
		testsvc.PollSeeing(t, time.Minute, "the failing messages are parked", func() string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("%+v", order)
		}, func() bool { return parkedCount(t, s) == 3 })

		mu.Lock()
		got := slices.Clone(order)
		mu.Unlock()
		goodAt := slices.IndexFunc(got, func(x seen) bool { return x.id == "good" })
		retriedAt := slices.IndexFunc(got, func(x seen) bool { return x.attempt > 1 })
		if goodAt < 0 || retriedAt >= 0 && retriedAt < goodAt {
			t.Errorf("deliveries %+v: want good handled before any retry", got)
		}
		for _, id := range bad {
			var attempts []int
			var first time.Time
			for _, x := range got {
				if x.id != id {
					continue
				}
				attempts = append(attempts, x.attempt)
				if first.IsZero() {
					first = x.enqueued
				}
				if !x.enqueued.Equal(first) || x.data != "payload of "+id {
					t.Errorf("%s on attempt %d: stored %s with %q, want %s and its payload", id, x.attempt, x.enqueued, x.data, first)
				}
			}
			if fmt.Sprint(attempts) != "[1 2 3]" {
				t.Errorf("%s: attempts %v, want [1 2 3]", id, attempts)
			}
		}
		ps, err := s.Parked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if !slices.Contains(bad, p.MsgID) || p.Attempts != 3 {
				t.Errorf("parked %+v: want one of %v after 3 attempts", p, bad)
			}
		}
		testsvc.Poll(t, 30*time.Second, "nothing waits or is in flight", func() bool {
			n, err := s.Lag(context.Background())
			return err == nil && n == 0
		})
		// Posted again, a parked one is stored anew: it was parked under
		// its own ID.
		if publish(t, s, "bad-1", "payload of bad-1") {
			t.Error("a parked message posted again was taken for a duplicate")
		}
	})
}

// A message waiting aside still counts in the stream's depth: in its lag,
// and as old as when it was first stored.
func TestWaitingMessagesCountInTheDepth(t *testing.T) {
	cfg := testConfig()
	cfg.WaitAside, cfg.RetryDelay, cfg.MaxRetryDelay = true, time.Hour, time.Hour
	cfg.MaxAge = 48 * time.Hour
	s := open(t, cfg)
	publish(t, s, "waits", "x")
	d := next(t, s)
	if how, err := d.Settle(context.Background(), errors.New("its server is down")); err != nil || how != SettledRetry {
		t.Fatalf("settle: %v, %v; want it retried", how, err)
	}
	dep, err := s.Depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if dep.Lag != 1 || dep.Oldest.IsZero() || dep.Oldest.Sub(d.Enqueued).Abs() > time.Millisecond {
		t.Fatalf("depth %+v, want lag 1 and the oldest stored at %s", dep, d.Enqueued)
	}
	if n := onStream(t, s); n != 0 {
		t.Errorf("%d messages on the stream itself while the one waits aside", n)
	}
}
