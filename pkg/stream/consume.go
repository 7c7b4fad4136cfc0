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

// Consume runs slots loops, each taking one delivery at a time with Next
// and handing it to handle, until ctx is done; it then waits for the
// handlers in flight to return. A panic in a handler is logged and its
// delivery Nak'd with RetryDelay: it never stops the other slots. Errors
// from the server (NATS down or restarting) are logged and retried with a
// growing delay: Consume returns only when ctx ends.
func (s *Stream) Consume(ctx context.Context, slots int, handle Handler) error {
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
	for i := range slots {
		log := s.log.With(zap.Int("slot", i))
		wg.Go(func() { s.slot(ctx, handle, log) })
	}
	wg.Wait()
	return nil
}

const (
	minRetry = 100 * time.Millisecond
	maxRetry = 10 * time.Second
)

func (s *Stream) slot(ctx context.Context, handle Handler, log *zap.Logger) {
	retry := minRetry
	for {
		d, err := s.Next(ctx)
		if ctx.Err() != nil {
			if d != nil {
				// Next returned a message just as ctx ended: give it back.
				settleUnsettled(d, 0)
			}
			return
		}
		if err != nil {
			log.Warn("fetch; retrying", zap.Error(err), zap.Duration("retry_in", retry))
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			retry = min(2*retry, maxRetry)
			continue
		}
		retry = minRetry
		s.run(ctx, handle, d)
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
