package queue

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/pkg/stream"
)

// Defaults for Config's zero fields.
const (
	DefaultStream     = "REDFIX_JOBS"
	DefaultSubject    = "redfix.jobs"
	DefaultConsumer   = "workers"
	DefaultMaxDeliver = 5
	// The delivery settings the queue shares with every stream.
	DefaultAckWait         = stream.DefaultAckWait
	DefaultDuplicateWindow = stream.DefaultDuplicateWindow
	DefaultMaxAckPending   = stream.DefaultMaxAckPending
	DefaultFetchWait       = stream.DefaultFetchWait
	DefaultRetryDelay      = stream.DefaultRetryDelay
)

// Config names the stream and the consumer and sets their delivery rules.
// The zero value of every field means its default.
type Config struct {
	// Stream is the JetStream stream that holds jobs (work-queue retention:
	// a job leaves the stream once acked or terminated).
	Stream string
	// Subject is where jobs are published.
	Subject string
	// Consumer is the durable pull consumer that all workers share.
	Consumer string
	// AckWait is how long a delivered job may go without an ack or an
	// InProgress before the server hands it to another worker.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one job, the first included.
	MaxDeliver int
	// DuplicateWindow is how long a job ID is remembered: a job enqueued
	// again within it is dropped as a duplicate.
	DuplicateWindow time.Duration
	// Backoff, when set, replaces AckWait with a per-delivery ack wait: the
	// server waits Backoff[n-1] after the nth delivery before redelivering,
	// the last value for all later ones. It holds at most MaxDeliver values.
	Backoff []time.Duration
	// MaxAckPending bounds the jobs delivered and not yet settled, across
	// all workers.
	MaxAckPending int
	// Storage is where the stream keeps jobs: file (the zero value) or
	// memory.
	Storage jetstream.StorageType
	// Replicas is the stream's replication factor in a cluster (1 alone).
	Replicas int
	// FetchWait is how long one pull request waits on the server before
	// Next issues another. It bounds how long a pull request outlives a
	// cancelled Next.
	FetchWait time.Duration
	// RetryDelay is how long Consume delays the redelivery of a job whose
	// handler panicked.
	RetryDelay time.Duration
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	// The rest are the stream's own defaults, written once in pkg/stream.
	d := c.stream().WithDefaults()
	c.AckWait, c.DuplicateWindow, c.MaxAckPending = d.AckWait, d.DuplicateWindow, d.MaxAckPending
	c.Replicas, c.FetchWait, c.RetryDelay = d.Replicas, d.FetchWait, d.RetryDelay
	return c
}

// Validate reports every setting that the server would refuse or that makes
// no sense for a job queue. Call it on a config with defaults applied.
func (c Config) Validate() error {
	var errs []error
	if c.MaxDeliver < 1 {
		errs = append(errs, fmt.Errorf("max deliver %d: must be at least 1 (redeliveries must be bounded)", c.MaxDeliver))
	} else if err := c.stream().WithDefaults().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("queue config: %w", err)
	}
	return nil
}

// stream is the configuration of the stream that holds the jobs.
// StreamConfig is the stream under the queue (for stream.Bind), defaults
// applied.
func (c Config) StreamConfig() stream.Config { return c.WithDefaults().stream() }

func (c Config) stream() stream.Config {
	return stream.Config{
		Stream:          c.Stream,
		Description:     "redfix repair jobs, one per failure group",
		Subject:         c.Subject,
		Consumer:        c.Consumer,
		AckWait:         c.AckWait,
		MaxDeliver:      c.MaxDeliver,
		DuplicateWindow: c.DuplicateWindow,
		Backoff:         c.Backoff,
		MaxAckPending:   c.MaxAckPending,
		Storage:         c.Storage,
		Replicas:        c.Replicas,
		FetchWait:       c.FetchWait,
		RetryDelay:      c.RetryDelay,
	}
}
