package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
)

// Delivery is one delivery of a job to a worker. Settle it exactly once with
// Ack, Nak or Term; until then, InProgress (or KeepAlive) keeps the server
// from handing it to another worker after AckWait.
type Delivery struct {
	Job job.Job
	// Attempt is 1 on the first delivery, and counts redeliveries after it.
	Attempt int
	// MaxDeliver is the consumer's bound on attempts.
	MaxDeliver int
	// Enqueued is when the job was stored on the stream.
	Enqueued time.Time
	// StreamSeq is the job's sequence number on the stream.
	StreamSeq uint64

	msg     jetstream.Msg
	q       *Queue
	log     *zap.Logger
	settled atomic.Bool
}

// ErrSettled is returned when a delivery is settled a second time.
var ErrSettled = errors.New("delivery already settled")

// LastAttempt reports whether the server will not deliver this job again if
// this attempt does not settle it: a worker should then end the job (Term,
// recording why) rather than Nak it.
func (d *Delivery) LastAttempt() bool { return d.Attempt >= d.MaxDeliver }

// Settled reports whether Ack, Nak or Term was called successfully.
func (d *Delivery) Settled() bool { return d.settled.Load() }

// Ack removes the job from the queue; it waits for the server to confirm.
func (d *Delivery) Ack(ctx context.Context) error {
	if d.settled.Load() {
		return fmt.Errorf("ack job %s: %w", d.Job.ID, ErrSettled)
	}
	if err := d.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("ack job %s: %w", d.Job.ID, err)
	}
	d.settled.Store(true)
	return nil
}

// Nak asks for a redelivery after delay (at once when delay is 0), for
// transient errors. The attempt still counts towards MaxDeliver.
func (d *Delivery) Nak(ctx context.Context, delay time.Duration) error {
	if d.settled.Load() {
		return fmt.Errorf("nak job %s: %w", d.Job.ID, ErrSettled)
	}
	var err error
	if delay > 0 {
		err = d.msg.NakWithDelay(delay)
	} else {
		err = d.msg.Nak()
	}
	if err != nil {
		return fmt.Errorf("nak job %s: %w", d.Job.ID, err)
	}
	d.settled.Store(true)
	return d.flush(ctx, "nak")
}

// Term ends the job for good, for permanent errors; reason appears in the
// server's advisory.
func (d *Delivery) Term(ctx context.Context, reason string) error {
	if d.settled.Load() {
		return fmt.Errorf("terminate job %s: %w", d.Job.ID, ErrSettled)
	}
	if err := d.msg.TermWithReason(truncate(reason, maxReason)); err != nil {
		return fmt.Errorf("terminate job %s: %w", d.Job.ID, err)
	}
	d.settled.Store(true)
	return d.flush(ctx, "terminate")
}

// InProgress resets the server's AckWait timer for this delivery.
func (d *Delivery) InProgress(ctx context.Context) error {
	if d.settled.Load() {
		return fmt.Errorf("mark job %s in progress: %w", d.Job.ID, ErrSettled)
	}
	if err := d.msg.InProgress(); err != nil {
		return fmt.Errorf("mark job %s in progress: %w", d.Job.ID, err)
	}
	return d.flush(ctx, "mark in progress")
}

// flushTimeout bounds a flush whose context has no deadline.
const flushTimeout = 10 * time.Second

// flush waits until the server has received what was sent, so that a
// settlement is not lost in the client's buffer when the worker exits.
func (d *Delivery) flush(ctx context.Context, what string) error {
	if _, ok := ctx.Deadline(); !ok {
		// The client refuses to flush without a deadline.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, flushTimeout)
		defer cancel()
	}
	if err := d.q.js.Conn().FlushWithContext(ctx); err != nil {
		return fmt.Errorf("%s job %s: flush: %w", what, d.Job.ID, err)
	}
	return nil
}

// KeepAlive sends InProgress every interval until stop is called, ctx is
// done or the delivery is settled; an interval <= 0 means a third of
// AckWait. stop waits for the heartbeat goroutine to end and may be called
// more than once. Failed heartbeats are logged: the job may then be
// redelivered to another worker, which jobs' idempotency tolerates.
func (d *Delivery) KeepAlive(ctx context.Context, every time.Duration) (stop func()) {
	if every <= 0 {
		every = d.q.cfg.AckWait / 3
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
				d.log.Warn("job heartbeat", zap.Error(err))
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
