package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Delivery is one delivery of a message. Settle it exactly once with Ack,
// Nak, Term, Park or Retry; until then, InProgress (or KeepAlive) keeps the
// server from handing it to another consumer after AckWait.
type Delivery struct {
	// Attempt is 1 on the first delivery, and counts redeliveries after it.
	Attempt int
	// MaxDeliver is the consumer's bound on attempts (-1: none).
	MaxDeliver int
	// Enqueued is when the message was stored on the stream.
	Enqueued time.Time
	// StreamSeq is the message's sequence number on the stream.
	StreamSeq uint64
	// MsgID is the message ID it was published with.
	MsgID string

	msg     jetstream.Msg
	s       *Stream
	log     *zap.Logger
	settled atomic.Bool
}

// ErrSettled is returned when a delivery is settled a second time.
var ErrSettled = errors.New("delivery already settled")

// maxReason bounds the termination reason that the server puts in its
// advisory.
const maxReason = 512

// Data is the message's payload.
func (d *Delivery) Data() []byte { return d.msg.Data() }

// Header is the message's header (nil when it has none).
func (d *Delivery) Header() nats.Header { return d.msg.Headers() }

// Log is the delivery's logger (stream, sequence and attempt attached).
func (d *Delivery) Log() *zap.Logger { return d.log }

// WithLog attaches more fields to the delivery's logger.
func (d *Delivery) WithLog(fields ...zap.Field) { d.log = d.log.With(fields...) }

// Settled reports whether the delivery was settled.
func (d *Delivery) Settled() bool { return d.settled.Load() }

func (d *Delivery) what() string {
	if d.MsgID != "" {
		return fmt.Sprintf("%s message %s", d.s.cfg.Stream, d.MsgID)
	}
	return fmt.Sprintf("%s message %d", d.s.cfg.Stream, d.StreamSeq)
}

// Ack removes the message from the stream; it waits for the server to
// confirm.
func (d *Delivery) Ack(ctx context.Context) error {
	if d.settled.Load() {
		return fmt.Errorf("ack %s: %w", d.what(), ErrSettled)
	}
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	if err := d.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("ack %s: %w", d.what(), err)
	}
	d.settled.Store(true)
	return nil
}

// Nak asks for a redelivery after delay (at once when delay is 0). The
// attempt counts towards MaxDeliver.
func (d *Delivery) Nak(ctx context.Context, delay time.Duration) error {
	if d.settled.Load() {
		return fmt.Errorf("nak %s: %w", d.what(), ErrSettled)
	}
	var err error
	if delay > 0 {
		err = d.msg.NakWithDelay(delay)
	} else {
		err = d.msg.Nak()
	}
	if err != nil {
		return fmt.Errorf("nak %s: %w", d.what(), err)
	}
	d.settled.Store(true)
	return d.flush(ctx, "nak")
}

// Term removes the message from the stream for good, without parking it;
// reason is logged, and appears in the server's advisory where the server
// reads it (2.10 and later: an older one would ignore a termination that
// carries a reason, so it is sent a plain one). Prefer Park: a terminated
// message is gone.
func (d *Delivery) Term(ctx context.Context, reason string) error {
	if d.settled.Load() {
		return fmt.Errorf("terminate %s: %w", d.what(), ErrSettled)
	}
	var err error
	if termReasons(d.s.js.Conn()) {
		err = d.msg.TermWithReason(truncate(reason, maxReason))
	} else {
		err = d.msg.Term()
	}
	if err != nil {
		return fmt.Errorf("terminate %s: %w", d.what(), err)
	}
	d.log.Info("message terminated", zap.String("reason", truncate(reason, maxReason)))
	d.settled.Store(true)
	return d.flush(ctx, "terminate")
}

// InProgress resets the server's AckWait timer for this delivery.
func (d *Delivery) InProgress(ctx context.Context) error {
	if d.settled.Load() {
		return fmt.Errorf("mark %s in progress: %w", d.what(), ErrSettled)
	}
	if err := d.msg.InProgress(); err != nil {
		return fmt.Errorf("mark %s in progress: %w", d.what(), err)
	}
	return d.flush(ctx, "mark in progress")
}

// flushTimeout bounds a flush or an ack whose context has no deadline.
const flushTimeout = 10 * time.Second

func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, flushTimeout)
}

// flush waits until the server has received what was sent, so that a
// settlement is not lost in the client's buffer when the process exits.
func (d *Delivery) flush(ctx context.Context, what string) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	if err := d.s.js.Conn().FlushWithContext(ctx); err != nil {
		return fmt.Errorf("%s %s: flush: %w", what, d.what(), err)
	}
	return nil
}

// KeepAlive sends InProgress every interval until stop is called, ctx is
// done or the delivery is settled; an interval <= 0 means a third of
// AckWait. stop waits for the heartbeat goroutine to end and may be called
// more than once. Failed heartbeats are logged: the message may then be
// redelivered to another consumer, which handlers' idempotency tolerates.
func (d *Delivery) KeepAlive(ctx context.Context, every time.Duration) (stop func()) {
	if every <= 0 {
		every = d.s.cfg.AckWait / 3
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if d.settled.Load() {
				return
			}
			if err := d.InProgress(ctx); err != nil && ctx.Err() == nil && !d.settled.Load() {
				d.log.Warn("heartbeat", zap.Error(err))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// RetryDelay is how long Retry would delay the next delivery: RetryDelay,
// doubled on each attempt, at most MaxRetryDelay.
func (d *Delivery) RetryDelay() time.Duration {
	delay := d.s.cfg.RetryDelay
	for i := 1; i < d.Attempt && delay < d.s.cfg.MaxRetryDelay; i++ {
		delay *= 2
	}
	return min(delay, d.s.cfg.MaxRetryDelay)
}

// LastAttempt reports whether Retry would park the message rather than
// have it delivered again: the attempts are used up, or the next one would
// come after MaxAge.
func (d *Delivery) LastAttempt() bool {
	if d.MaxDeliver > 0 && d.Attempt >= d.MaxDeliver {
		return true
	}
	if age := d.s.cfg.MaxAge; age > 0 && time.Since(d.Enqueued)+d.RetryDelay() > age {
		return true
	}
	return false
}

// Retry settles a delivery whose handling failed for a reason that may
// pass (a server down, a timeout): a redelivery after RetryDelay, or, on
// the last attempt, the message is parked with cause as the reason. parked
// says which.
func (d *Delivery) Retry(ctx context.Context, cause error) (parked bool, err error) {
	if d.LastAttempt() {
		return true, d.Park(ctx, fmt.Sprintf("gave up after %d attempts over %s: %v", d.Attempt, time.Since(d.Enqueued).Round(time.Second), cause))
	}
	return false, d.retry(ctx, d.RetryDelay())
}
