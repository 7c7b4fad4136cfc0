package queue

import (
	"context"

	"github.com/redfix/redfix/pkg/stream"
)

// Handler works on one job. It settles the delivery itself (Ack, Nak, Term
// or Park); a delivery it leaves unsettled is Nak'd at once, so that
// another worker may take it (a handler that returns early on shutdown
// need do nothing). ctx is the one given to Consume.
type Handler func(ctx context.Context, d *Delivery)

// Consume runs slots workers, each taking one job at a time and handing it
// to handle, until ctx is done; it then waits for the handlers in flight to
// return. A panic in a handler is logged and its job Nak'd with
// RetryDelay: it never stops the other slots. Errors from the server are
// logged and retried with a growing delay. Messages that are not jobs are
// parked (see Next). opts are the stream's (stream.WhileReady).
func (q *Queue) Consume(ctx context.Context, slots int, handle Handler, opts ...stream.ConsumeOption) error {
	var h stream.Handler
	if handle != nil {
		h = func(ctx context.Context, sd *stream.Delivery) {
			if d := q.delivery(ctx, sd); d != nil {
				handle(ctx, d)
			}
		}
	}
	return q.s.Consume(ctx, slots, h, opts...)
}
