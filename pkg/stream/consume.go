package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// Handler works on one delivery. It settles the delivery itself; a
// delivery it leaves unsettled is Nak'd at once, so that another consumer
// may take it (a handler that returns early on shutdown need do nothing).
// ctx is the one given to Consume.
type Handler func(ctx context.Context, d *Delivery)

// settleTimeout bounds how long Consume tries to settle a delivery that its
// handler left unsettled, even while shutting down.
const settleTimeout = 5 * time.Second

// ConsumeOption changes how Consume pulls.
type ConsumeOption func(*consumeOptions)

type consumeOptions struct {
	ready func(context.Context) error
}

// WhileReady makes Consume pull only while ready answers nil: each slot
// asks it before each fetch and, while it answers an error, pulls nothing
// and asks again with a growing delay (from 100ms to 5s), logging once when
// it pauses and once when it resumes. A message that comes in while ready
// turned false during the fetch is handed back at once (a Nak: it counts as
// a delivery) rather than handled. Deliveries already being handled are
// left to their handlers. ready is what the handlers need (the stores):
// pulling while they are down would fail one message after another.
func WhileReady(ready func(context.Context) error) ConsumeOption {
	return func(o *consumeOptions) { o.ready = ready }
}

// Consume runs slots loops, each taking one delivery at a time (one pull
// request after another, as Next) and handing it to handle, until ctx is done; it then waits for the
// handlers in flight to return. A panic in a handler is logged and its
// delivery Nak'd with RetryDelay: it never stops the other slots. Errors
// from the server (NATS down or restarting) are logged and retried with a
// growing delay: Consume returns only when ctx ends.
func (s *Stream) Consume(ctx context.Context, slots int, handle Handler, opts ...ConsumeOption) error {
	var o consumeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if slots < 1 {
		return fmt.Errorf("consume %s/%s: %d slots: need at least 1", s.cfg.Stream, s.cfg.Consumer, slots)
	}
	if handle == nil {
		return fmt.Errorf("consume %s/%s: no handler", s.cfg.Stream, s.cfg.Consumer)
	}
	var wg conc.WaitGroup
	wg.Go(func() {
		if err := s.WatchExhausted(ctx); err != nil {
			s.log.Warn("messages that use up their deliveries will stay on the stream", zap.Error(err))
		}
	})
	if s.wait != nil {
		wg.Go(func() { s.returnWaiting(ctx) })
	}
	for i := range slots {
		log := s.log.With(zap.Int("slot", i))
		wg.Go(func() { s.slot(ctx, handle, o, log) })
	}
	wg.Wait()
	return nil
}

const (
	minRetry = 100 * time.Millisecond
	maxRetry = 10 * time.Second
	// maxReadyWait caps the delay between two readiness checks of a
	// paused slot; readyTimeout bounds one check.
	maxReadyWait = 5 * time.Second
	readyTimeout = 5 * time.Second
)

func (s *Stream) slot(ctx context.Context, handle Handler, o consumeOptions, log *zap.Logger) {
	retry := minRetry
	for {
		if o.ready != nil && !waitReady(ctx, o.ready, log) {
			return
		}
		// One pull request at a time (at most FetchWait), so that readiness
		// is asked again between two.
		msg, err := s.fetch(ctx)
		var d *Delivery
		if msg != nil {
			d = s.delivery(msg)
		}
		if ctx.Err() != nil {
			if d != nil {
				// The fetch returned a message just as ctx ended: give it back.
				settleUnsettled(d, 0)
			}
			return
		}
		if err != nil {
			log.Warn("fetch; retrying", zap.Error(err), zap.Duration("retry_in", retry))
			if !sleep(ctx, retry) {
				return
			}
			retry = min(2*retry, maxRetry)
			continue
		}
		retry = minRetry
		if d == nil {
			continue // the pull request expired empty
		}
		if o.ready != nil {
			if err := checkReady(ctx, o.ready); err != nil {
				// Not ready any more since the fetch began: hand the message
				// back untouched rather than fail it.
				d.log.Warn("not ready since the fetch; message handed back", zap.Error(err))
				settleUnsettled(d, 0)
				continue
			}
		}
		s.run(ctx, handle, d)
	}
}

func checkReady(ctx context.Context, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return ready(ctx)
}

// waitReady returns once ready answers nil (true) or ctx ends (false),
// asking again with a growing delay.
func waitReady(ctx context.Context, ready func(context.Context) error, log *zap.Logger) bool {
	wait := minRetry
	paused := false
	for {
		err := checkReady(ctx, ready)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			if paused {
				log.Info("ready again: pulling messages")
			}
			return true
		}
		if !paused {
			log.Warn("not ready: pulling no messages until it is", zap.Error(err))
			paused = true
		}
		if !sleep(ctx, wait) {
			return false
		}
		wait = min(2*wait, maxReadyWait)
	}
}

// sleep waits d, or less when ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (s *Stream) run(ctx context.Context, handle Handler, d *Delivery) {
	panicked := true
	defer func() {
		if !panicked {
			return
		}
		r := recover()
		d.log.Error("handler panicked", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
		settleUnsettled(d, s.cfg.RetryDelay)
	}()
	handle(ctx, d)
	panicked = false
	if !d.Settled() && ctx.Err() == nil {
		d.log.Warn("handler returned without settling; nak")
	}
	settleUnsettled(d, 0)
}

// settleUnsettled Naks a delivery its handler did not settle.
func settleUnsettled(d *Delivery, delay time.Duration) {
	if d.Settled() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	if err := d.Nak(ctx, delay); err != nil && !errors.Is(err, ErrSettled) {
		d.log.Warn("nak unsettled delivery", zap.Error(err))
	}
}
