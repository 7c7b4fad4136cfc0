package queue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// Handler works on one job. It settles the delivery itself (Ack, Nak or
// Term); a delivery it leaves unsettled is Nak'd at once, so that another
// worker may take it (a handler that returns early on shutdown need do
// nothing). ctx is the one given to Consume.
type Handler func(ctx context.Context, d *Delivery)

// settleTimeout bounds how long Consume tries to settle a delivery that its
// handler left unsettled, even while shutting down.
const settleTimeout = 5 * time.Second

// Consume runs slots workers, each taking one job at a time with Next and
// handing it to handle, until ctx is done; it then waits for the handlers
// in flight to return. A panic in a handler is logged and its job Nak'd
// with RetryDelay: it never stops the other slots. Errors from the server
// are logged and retried with a growing delay.
func (q *Queue) Consume(ctx context.Context, slots int, handle Handler) error {
	if slots < 1 {
		return fmt.Errorf("consume %s/%s: %d slots: need at least 1", q.cfg.Stream, q.cfg.Consumer, slots)
	}
	if handle == nil {
		return fmt.Errorf("consume %s/%s: no handler", q.cfg.Stream, q.cfg.Consumer)
	}
	var wg conc.WaitGroup
	for i := range slots {
		log := q.log.With(zap.Int("slot", i))
		wg.Go(func() { q.slot(ctx, handle, log) })
	}
	wg.Wait()
	return nil
}

const (
	minRetry = 100 * time.Millisecond
	maxRetry = 10 * time.Second
)

func (q *Queue) slot(ctx context.Context, handle Handler, log *zap.Logger) {
	retry := minRetry
	for {
		d, err := q.Next(ctx)
		if ctx.Err() != nil {
			if d != nil {
				// Next returned a job just as ctx ended: give it back.
				q.settle(d, false)
			}
			return
		}
		if err != nil {
			log.Warn("fetch a job; retrying", zap.Error(err), zap.Duration("retry_in", retry))
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
		q.run(ctx, handle, d)
	}
}

func (q *Queue) run(ctx context.Context, handle Handler, d *Delivery) {
	panicked := true
	defer func() {
		if !panicked {
			return
		}
		r := recover()
		d.log.Error("job handler panicked", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
		if !d.Settled() {
			q.settle(d, true)
		}
	}()
	handle(ctx, d)
	panicked = false
	if !d.Settled() {
		if ctx.Err() == nil {
			d.log.Warn("job handler returned without settling the job; nak")
		}
		q.settle(d, false)
	}
}

// settle Naks a delivery its handler did not settle; after a panic, with
// RetryDelay.
func (q *Queue) settle(d *Delivery, afterPanic bool) {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	var delay time.Duration
	if afterPanic {
		delay = q.cfg.RetryDelay
	}
	if err := d.Nak(ctx, delay); err != nil && !errors.Is(err, ErrSettled) {
		d.log.Warn("nak unsettled job", zap.Error(err))
	}
}
