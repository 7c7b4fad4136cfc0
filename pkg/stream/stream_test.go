package stream

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
)

func open(t *testing.T, cfg Config) *Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js := embeddedtest.JetStream(t)
	s, err := Open(ctx, js, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testConfig() Config {
	return Config{Stream: "T", Subject: "t.in", Consumer: "c", AckWait: time.Second, MaxDeliver: -1, MaxAge: time.Minute,
		RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 40 * time.Millisecond, FetchWait: 200 * time.Millisecond}
}

func next(t *testing.T, s *Stream) *Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func publish(t *testing.T, s *Stream, id, data string) (duplicate bool) {
	t.Helper()
	dup, err := s.Publish(context.Background(), id, []byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dup
}

func parkedCount(t *testing.T, s *Stream) uint64 {
	t.Helper()
	n, err := s.ParkedCount(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRetryBacksOffThenParksAndReplayRestores(t *testing.T) {
	// On each server: 2.9 must see the parked message leave its stream too.
	onServers(t, func(t *testing.T, js jetstream.JetStream) {
		cfg := testConfig()
		cfg.MaxDeliver = 4
		s := openOn(t, js, cfg)
		publish(t, s, "m-1", "payload one")
		publish(t, s, "m-2", "payload two")

		// m-1 fails on every attempt: redelivered with a growing delay, then
		// parked on its last attempt.
		var delays []time.Duration
		for attempt := 1; ; attempt++ {
			d := next(t, s)
			if d.MsgID == "m-2" {
				if err := d.Ack(context.Background()); err != nil {
					t.Fatal(err)
				}
				attempt--
				continue
			}
			if d.Attempt != attempt {
				t.Fatalf("attempt %d, want %d", d.Attempt, attempt)
			}
			if got, want := d.LastAttempt(), attempt == 4; got != want {
				t.Fatalf("attempt %d: LastAttempt = %v", attempt, got)
			}
			delays = append(delays, d.RetryDelay())
			parked, err := d.Retry(context.Background(), fmt.Errorf("redis is down"))
			if err != nil {
				t.Fatal(err)
			}
			if parked != (attempt == 4) {
				t.Fatalf("attempt %d: parked = %v", attempt, parked)
			}
			if parked {
				break
			}
		}
		if want := fmt.Sprint([]time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}); fmt.Sprint(delays) != want {
			t.Fatalf("retry delays %v, want %s", delays, want)
		}
		testsvc.Poll(t, 30*time.Second, "the parked message leaves its stream", func() bool {
			n, err := s.Lag(context.Background())
			return err == nil && n == 0
		})
		ps, err := s.Parked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].MsgID != "m-1" || ps[0].Attempts != 4 || ps[0].Reason == "" || ps[0].Enqueued.IsZero() {
			t.Fatalf("parked = %+v", ps)
		}

		n, err := s.Replay(context.Background(), "")
		if err != nil || n != 1 {
			t.Fatalf("replay: %d, %v", n, err)
		}
		d := next(t, s)
		if string(d.Data()) != "payload one" || d.Attempt != 1 {
			t.Fatalf("replayed delivery %q attempt %d", d.Data(), d.Attempt)
		}
		if err := d.Ack(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := parkedCount(t, s); got != 0 {
			t.Fatalf("%d parked after replay, want 0", got)
		}
	})
}

func TestMaxAgeBoundsRetries(t *testing.T) {
	cfg := testConfig()
	cfg.MaxAge = 300 * time.Millisecond
	s := open(t, cfg)
	publish(t, s, "old", "x")
	var attempts int
	for {
		d := next(t, s)
		attempts++
		parked, err := d.Retry(context.Background(), fmt.Errorf("still down"))
		if err != nil {
			t.Fatal(err)
		}
		if parked {
			if time.Since(d.Enqueued)+d.RetryDelay() <= cfg.MaxAge {
				t.Fatalf("parked at age %s, before max age", time.Since(d.Enqueued))
			}
			break
		}
		if attempts > 100 {
			t.Fatal("never parked")
		}
	}
	if attempts < 3 {
		t.Fatalf("parked after %d attempts; retries should fill the max age", attempts)
	}
	if got := parkedCount(t, s); got != 1 {
		t.Fatalf("%d parked, want 1", got)
	}
}

func TestRepostOfParkedMessageIsNotDuplicate(t *testing.T) {
	s := open(t, testConfig())
	publish(t, s, "r-1", "first")
	d := next(t, s)
	if err := d.Park(context.Background(), "triage failed for good"); err != nil {
		t.Fatal(err)
	}
	if dup := publish(t, s, "r-1", "second"); dup {
		t.Fatal("the re-post of a parked message was a duplicate")
	}
	d = next(t, s)
	if string(d.Data()) != "second" {
		t.Fatalf("delivered %q, want the re-post", d.Data())
	}
	if got := parkedCount(t, s); got != 0 {
		t.Fatalf("%d parked after the re-post, want 0 (it supersedes the parked copy)", got)
	}
	if err := d.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Once handled, the same ID is a duplicate again.
	if dup := publish(t, s, "r-1", "third"); !dup {
		t.Fatal("a re-post of a handled message was not a duplicate")
	}
}

func TestConsumeRecoversPanicAndNaksUnsettled(t *testing.T) {
	cfg := testConfig()
	s := open(t, cfg)
	publish(t, s, "p", "x")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var attempts []int
	done := make(chan error, 1)
	go func() {
		done <- s.Consume(ctx, 2, func(ctx context.Context, d *Delivery) {
			mu.Lock()
			attempts = append(attempts, d.Attempt)
			n := len(attempts)
			mu.Unlock()
			switch n {
			case 1:
				panic("bug")
			case 2:
				return // unsettled: nak'd at once
			default:
				_ = d.Ack(ctx)
			}
		})
	}()
	testsvc.Poll(t, 30*time.Second, "three deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(attempts) == 3
	})
	testsvc.Poll(t, 30*time.Second, "the message is acked", func() bool {
		n, err := s.Lag(context.Background())
		return err == nil && n == 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Fatalf("attempts %v", attempts)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ok", testConfig(), ""},
		{"unbounded", func() Config { c := testConfig(); c.MaxAge = 0; return c }(), "max age"},
		{"dead subject", func() Config { c := testConfig(); c.DeadSubject = "x.y"; return c }(), "dead-letter subject"},
		{"retry cap", func() Config { c := testConfig(); c.MaxRetryDelay = time.Millisecond; return c }(), "max retry delay"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A message whose consumer dies on every delivery, the last included, is
// parked instead of sitting on the stream for good.
func TestExhaustedMessageIsParked(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDeliver, cfg.AckWait = 2, 300*time.Millisecond
	s := open(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.WatchExhausted(ctx) }()
	publish(t, s, "doomed", "x")
	for attempt := 1; attempt <= 2; attempt++ {
		if d := next(t, s); d.Attempt != attempt {
			t.Fatalf("attempt %d, want %d", d.Attempt, attempt) // and the consumer "dies"
		}
	}
	// Other consumers keep pulling, as workers do: the server notices the
	// used-up message when it would deliver it again.
	go func() {
		for ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
			if d, err := s.Next(pctx); err == nil {
				t.Errorf("delivered again after max deliver: attempt %d", d.Attempt)
			}
			pcancel()
		}
	}()
	testsvc.Poll(t, 30*time.Second, "the exhausted message is parked", func() bool { return parkedCount(t, s) == 1 })
	testsvc.Poll(t, 30*time.Second, "the exhausted message leaves its stream", func() bool {
		st, err := s.js.Stream(context.Background(), cfg.Stream)
		if err != nil {
			return false
		}
		info, err := st.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
	ps, _ := s.Parked(context.Background())
	if len(ps) != 1 || ps[0].MsgID != "doomed" || ps[0].Attempts != 2 {
		t.Fatalf("parked %+v", ps)
	}
}

// WhileReady: an idle slot asks between two pull requests; once ready says
// no it pulls nothing, however long, and it takes the waiting message on
// its first attempt once ready says yes again.
func TestConsumePullsOnlyWhileReady(t *testing.T) {
	s := open(t, testConfig())
	var ready atomic.Bool
	ready.Store(true)
	var asked, refused atomic.Int64
	var mu sync.Mutex
	var attempts []int
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// One slot: once it is refused it is not in a pull request.
		done <- s.Consume(ctx, 1, func(ctx context.Context, d *Delivery) {
			mu.Lock()
			attempts = append(attempts, d.Attempt)
			mu.Unlock()
			_ = d.Ack(ctx)
		}, WhileReady(func(context.Context) error {
			asked.Add(1)
			if ready.Load() {
				return nil
			}
			refused.Add(1)
			return fmt.Errorf("redis at 127.0.0.1:1: connection refused")
		}))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// Idle slots ask again after each empty pull request (FetchWait).
	testsvc.Poll(t, 30*time.Second, "the idle slot asks again", func() bool { return asked.Load() >= 3 })
	ready.Store(false)
	testsvc.Poll(t, 30*time.Second, "the slot notices it is not ready", func() bool { return refused.Load() > 0 })
	publish(t, s, "held", "x")
	after := refused.Load()
	// The slot asks again, and is refused, several times after the
	// message is stored: had it pulled, it would have had the message.
	testsvc.Poll(t, 30*time.Second, "the paused slot asks again, and is refused, three more times", func() bool { return refused.Load() >= after+3 })
	mu.Lock()
	pulled := len(attempts)
	mu.Unlock()
	if pulled != 0 {
		t.Fatalf("%d deliveries while not ready", pulled)
	}
	// The consumer's counts are updated asynchronously: polled, not read once.
	testsvc.Poll(t, 30*time.Second, "the lag shows the message waiting", func() bool {
		n, err := s.Lag(context.Background())
		return err == nil && n == 1
	})
	ready.Store(true)
	testsvc.Poll(t, 30*time.Second, "the message is taken once ready", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(attempts) == 1
	})
	if attempts[0] != 1 {
		t.Fatalf("attempt %d, want 1: pausing must not use up deliveries", attempts[0])
	}
}

// A message fetched while ready turned false is handed back, not handled,
// and handled once ready again.
func TestConsumeHandsBackWhatCameWhileNotReady(t *testing.T) {
	s := open(t, testConfig())
	publish(t, s, "early", "x")
	var ready atomic.Bool
	var asked atomic.Int64
	handled := make(chan int, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Consume(ctx, 1, func(ctx context.Context, d *Delivery) {
			handled <- d.Attempt
			_ = d.Ack(ctx)
		}, WhileReady(func(context.Context) error {
			// Ready before the fetch, no longer once the message is in.
			if asked.Add(1) == 1 || ready.Load() {
				return nil
			}
			return fmt.Errorf("redis down")
		}))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	testsvc.Poll(t, 30*time.Second, "the slot pauses", func() bool { return asked.Load() >= 4 })
	select {
	case a := <-handled:
		t.Fatalf("attempt %d handled while not ready", a)
	default:
	}
	testsvc.Poll(t, 30*time.Second, "the lag shows the message handed back", func() bool {
		n, err := s.Lag(context.Background())
		return err == nil && n == 1
	})
	ready.Store(true)
	if a := testsvc.Receive(t, 30*time.Second, "the handed-back message is handled once ready", handled); a != 2 {
		t.Fatalf("attempt %d, want 2 (the hand-back was a delivery)", a)
	}
}

// TestOpenUpdatesOnlyWhatDiffers: opening a stream as it already is leaves
// it alone, and opening it with another setting (a new duplicate window)
// updates it, for the dead-letter stream too.
func TestOpenUpdatesOnlyWhatDiffers(t *testing.T) {
	js := embeddedtest.JetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := testConfig()
	cfg.DuplicateWindow = time.Minute
	for range 2 {
		if _, err := Open(ctx, js, cfg, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg.DuplicateWindow = 3 * time.Minute
	if _, err := Open(ctx, js, cfg, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{cfg.Stream, cfg.WithDefaults().DeadStream} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if d := st.CachedInfo().Config.Duplicates; d != 3*time.Minute {
			t.Errorf("stream %s: duplicate window %s after the update, want 3m", name, d)
		}
	}
}
