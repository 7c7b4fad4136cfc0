// Package queue is redfix's job queue on NATS JetStream: a work-queue stream
// that keeps one job per failure group (the job ID is the JetStream message
// ID, deduplicated over a window), and a durable pull consumer that the
// workers share, one message per worker slot, with explicit acks, InProgress
// heartbeats and bounded redeliveries.
package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
)

// Queue publishes jobs and hands them to workers.
type Queue struct {
	js   jetstream.JetStream
	cons jetstream.Consumer
	cfg  Config
	log  *zap.Logger

	malformed atomic.Uint64
}

// Open creates or updates the stream and the durable consumer that cfg
// describes, so that every bot and worker that opens the queue agrees on
// them.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Queue, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "redfix repair jobs, one per failure group",
		Subjects:    []string{cfg.Subject},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update stream %s: %w", cfg.Stream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   "redfix workers",
		FilterSubject: cfg.Subject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		BackOff:       cfg.Backoff,
		MaxAckPending: cfg.MaxAckPending,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update consumer %s on stream %s: %w", cfg.Consumer, cfg.Stream, err)
	}
	log = log.With(zap.String("stream", cfg.Stream), zap.String("consumer", cfg.Consumer))
	log.Debug("queue open", zap.String("subject", cfg.Subject), zap.Duration("ack_wait", cfg.AckWait), zap.Int("max_deliver", cfg.MaxDeliver))
	return &Queue{js: js, cons: cons, cfg: cfg, log: log}, nil
}

// Config is the queue's configuration, defaults applied.
func (q *Queue) Config() Config { return q.cfg }

// Enqueue publishes a job with its ID as the message ID. duplicate is true
// when the stream already saw that ID within the duplicate window; the job
// was then not queued again.
func (q *Queue) Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error) {
	if err := j.Validate(); err != nil {
		return false, fmt.Errorf("enqueue: %w", err)
	}
	data, err := j.Encode()
	if err != nil {
		return false, fmt.Errorf("enqueue job %s: %w", j.ID, err)
	}
	ack, err := q.js.Publish(ctx, q.cfg.Subject, data,
		jetstream.WithMsgID(j.ID), jetstream.WithExpectStream(q.cfg.Stream))
	if err != nil {
		return false, fmt.Errorf("enqueue job %s on %s: %w", j.ID, q.cfg.Subject, err)
	}
	return ack.Duplicate, nil
}

// Next waits for one job and returns it, or returns ctx's error once ctx is
// done. The delivery must then be settled with Ack, Nak or Term (and kept
// alive with InProgress or KeepAlive while it runs longer than AckWait).
//
// A message that is not a valid job is terminated here, with the decode
// error as the reason, logged, and counted in Malformed: it is never
// returned and never redelivered.
func (q *Queue) Next(ctx context.Context) (*Delivery, error) {
	for {
		msg, err := q.fetch(ctx)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue // the pull request expired empty
		}
		d, err := q.delivery(msg)
		if err != nil {
			q.reject(ctx, msg, err)
			continue
		}
		return d, nil
	}
}

// fetch pulls at most one message, waiting at most FetchWait. It returns a
// nil message when none came in that time.
func (q *Queue) fetch(ctx context.Context) (jetstream.Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 10*time.Millisecond {
		// Too short for a pull request to reach the server and expire.
		<-ctx.Done()
		return nil, ctx.Err()
	}
	pollCtx, cancel := context.WithTimeout(ctx, q.cfg.FetchWait)
	defer cancel()
	msg, err := q.cons.Next(jetstream.FetchContext(pollCtx))
	switch {
	case err == nil:
		return msg, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, jetstream.ErrNoMessages):
		return nil, nil
	default:
		return nil, fmt.Errorf("fetch a job from %s/%s: %w", q.cfg.Stream, q.cfg.Consumer, err)
	}
}

// malformedError is why a message was not a job.
type malformedError struct {
	StreamSeq uint64
	Err       error
}

func (e *malformedError) Error() string {
	return fmt.Sprintf("message %d is not a valid job: %v", e.StreamSeq, e.Err)
}

func (e *malformedError) Unwrap() error { return e.Err }

func (q *Queue) delivery(msg jetstream.Msg) (*Delivery, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return nil, &malformedError{Err: fmt.Errorf("read metadata: %w", err)}
	}
	j, err := job.Decode(msg.Data())
	if err != nil {
		return nil, &malformedError{StreamSeq: meta.Sequence.Stream, Err: err}
	}
	return &Delivery{
		Job:        j,
		Attempt:    int(meta.NumDelivered),
		MaxDeliver: q.cfg.MaxDeliver,
		Enqueued:   meta.Timestamp,
		StreamSeq:  meta.Sequence.Stream,
		msg:        msg,
		q:          q,
		log: q.log.With(zap.String("job", j.ID), zap.String("task", j.Task.ID),
			zap.Uint64("seq", meta.Sequence.Stream), zap.Uint64("attempt", meta.NumDelivered)),
	}, nil
}

// maxReason bounds the termination reason that the server puts in its
// advisory.
const maxReason = 512

// reject terminates a message that is not a job.
func (q *Queue) reject(ctx context.Context, msg jetstream.Msg, cause error) {
	q.malformed.Add(1)
	reason := truncate("malformed job: "+cause.Error(), maxReason)
	log := q.log.With(zap.Error(cause), zap.String("subject", msg.Subject()),
		zap.ByteString("payload_head", []byte(truncate(string(msg.Data()), 200))))
	if err := msg.TermWithReason(reason); err != nil {
		log.Error("malformed job message; terminating it failed, it will be redelivered until max deliver", zap.NamedError("term_error", err))
		return
	}
	fctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	if err := q.js.Conn().FlushWithContext(fctx); err != nil {
		log.Warn("malformed job message terminated; flushing the termination failed", zap.NamedError("flush_error", err))
		return
	}
	log.Error("malformed job message terminated; it will not be redelivered")
}

// Malformed counts the messages that Next terminated because they were not
// valid jobs, since the queue was opened.
func (q *Queue) Malformed() uint64 { return q.malformed.Load() }

// Lag is the number of jobs waiting or in flight: not yet delivered plus
// delivered and not yet settled. Workers autoscale on it.
func (q *Queue) Lag(ctx context.Context) (pending uint64, err error) {
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("read lag of %s/%s: %w", q.cfg.Stream, q.cfg.Consumer, err)
	}
	return info.NumPending + uint64(info.NumAckPending), nil
}

// Ready reports whether the consumer answers, for readiness probes.
func (q *Queue) Ready(ctx context.Context) error {
	if _, err := q.cons.Info(ctx); err != nil {
		return fmt.Errorf("queue %s/%s: %w", q.cfg.Stream, q.cfg.Consumer, err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
