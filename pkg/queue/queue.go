// Package queue is redfix's job queue on NATS JetStream: a work-queue stream
// that keeps one job per failure group (the job ID is the JetStream message
// ID, deduplicated over a window), and a durable pull consumer that the
// workers share, one message per worker slot, with explicit acks, InProgress
// heartbeats, bounded redeliveries and a dead-letter stream (pkg/stream).
package queue

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/stream"
)

// Queue publishes jobs and hands them to workers.
type Queue struct {
	s   *stream.Stream
	cfg Config
	log *zap.Logger

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
	s, err := stream.Open(ctx, js, cfg.stream(), log)
	if err != nil {
		return nil, err
	}
	log = log.With(zap.String("stream", cfg.Stream), zap.String("consumer", cfg.Consumer))
	return &Queue{s: s, cfg: cfg, log: log}, nil
}

// Bind opens the queue on the stream and consumer that cfg names as they
// are on the server, changing nothing: an error wrapping stream.ErrNotFound
// when the server does not hold them (for tools that must not create a
// queue where there was none).
func Bind(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Queue, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	s, err := stream.Bind(ctx, js, cfg.stream(), log)
	if err != nil {
		return nil, err
	}
	log = log.With(zap.String("stream", cfg.Stream), zap.String("consumer", cfg.Consumer))
	return &Queue{s: s, cfg: cfg, log: log}, nil
}

// Config is the queue's configuration, defaults applied.
func (q *Queue) Config() Config { return q.cfg }

// Stream is the stream under the queue (for its dead letters).
func (q *Queue) Stream() *stream.Stream { return q.s }

// Enqueue publishes a job with MessageID as the message ID. duplicate is
// true when the stream already saw that ID within the duplicate window; the
// job was then not queued again. A job that was parked is queued again.
func (q *Queue) Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error) {
	if err := j.Validate(); err != nil {
		return false, fmt.Errorf("enqueue: %w", err)
	}
	data, err := j.Encode()
	if err != nil {
		return false, fmt.Errorf("enqueue job %s: %w", j.ID, err)
	}
	dup, err := q.s.Publish(ctx, MessageID(j), data, nil)
	if err != nil {
		return false, fmt.Errorf("enqueue job %s: %w", j.ID, err)
	}
	return dup, nil
}

// Next waits for one job and returns it, or returns ctx's error once ctx is
// done. The delivery must then be settled with Ack, Nak or Term (and kept
// alive with InProgress or KeepAlive while it runs longer than AckWait).
//
// A message that is not a valid job is parked on the dead-letter stream
// here, with the decode error as the reason, logged, and counted in
// Malformed: it is never returned and never redelivered.
func (q *Queue) Next(ctx context.Context) (*Delivery, error) {
	for {
		sd, err := q.s.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d := q.delivery(ctx, sd); d != nil {
			return d, nil
		}
	}
}

// delivery decodes a job; a message that is not one is parked and nil
// returned.
func (q *Queue) delivery(ctx context.Context, sd *stream.Delivery) *Delivery {
	j, err := job.Decode(sd.Data())
	if err != nil {
		q.malformed.Add(1)
		sd.WithLog(zap.ByteString("payload_head", []byte(truncate(string(sd.Data()), 200))))
		if perr := sd.Park(ctx, fmt.Sprintf("malformed job: message %d is not a valid job: %v", sd.StreamSeq, err)); perr != nil {
			sd.Log().Error("malformed job message; parking it failed, it will be redelivered until max deliver", zap.Error(err), zap.NamedError("park_error", perr))
		}
		return nil
	}
	sd.WithLog(zap.String("job", j.ID), zap.String("task", j.Task.ID))
	return &Delivery{Job: j, Delivery: sd}
}

// MessageID is the job's message ID on the stream: the group's
// fingerprint and the task's ID. Queueing the same task again (a triage
// resumed after a crash) is a no-op; a later task of the same group (its
// earlier verdict expired) is queued. The group's claim keeps one task per
// group at a time.
func MessageID(j job.Job) string {
	if j.Task.ID == "" {
		return j.ID
	}
	return j.ID + "/" + j.Task.ID
}

// Malformed counts the messages that Next parked because they were not
// valid jobs, since the queue was opened.
func (q *Queue) Malformed() uint64 { return q.malformed.Load() }

// MalformedMetric is redfix_queue_malformed_jobs_total, read from
// Malformed at each scrape.
func (q *Queue) MalformedMetric() prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "redfix_queue_malformed_jobs_total",
		Help: "Queued jobs terminated because they did not decode.",
	}, func() float64 { return float64(q.Malformed()) })
}

// Lag is the number of jobs waiting or in flight: not yet delivered plus
// delivered and not yet settled. Workers autoscale on it.
func (q *Queue) Lag(ctx context.Context) (pending uint64, err error) {
	return q.s.Lag(ctx)
}

// Ready reports whether the consumer answers, for readiness probes.
func (q *Queue) Ready(ctx context.Context) error { return q.s.Ready(ctx) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
