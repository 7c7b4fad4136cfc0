package stream

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for Config's zero fields.
const (
	DefaultAckWait         = 2 * time.Minute
	DefaultDuplicateWindow = 24 * time.Hour
	DefaultMaxAckPending   = 1000
	DefaultFetchWait       = 5 * time.Second
	DefaultRetryDelay      = 30 * time.Second
	DefaultMaxRetryDelay   = 10 * time.Minute
	// DefaultDeadStream is the stream that holds parked messages of every
	// stream, each under its own subject prefix.
	DefaultDeadStream = "REDFIX_DEAD"
	// DeadSubjects is the subject space of the dead-letter stream.
	DeadSubjects = "redfix.dead.>"
)

// Config describes a work-queue stream, its durable pull consumer, and how
// its messages are retried and parked. The zero value of a field means its
// default, except where said.
type Config struct {
	// Stream is the JetStream stream (work-queue retention: a message
	// leaves it once acked or terminated).
	Stream string
	// Description is the stream's and the consumer's description.
	Description string
	// Subject is where messages are published.
	Subject string
	// Consumer is the durable pull consumer that every instance shares.
	Consumer string
	// AckWait is how long a delivery may go without a settlement or an
	// InProgress before the server hands it to another consumer.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one message, the first included;
	// -1 means no bound (then MaxAge bounds retries). It must be set.
	MaxDeliver int
	// MaxAge, when positive, bounds how long a failing message is retried,
	// counted from when it was stored: Retry parks it once the next try
	// would come later than that.
	MaxAge time.Duration
	// DuplicateWindow is how long a message ID is remembered.
	DuplicateWindow time.Duration
	// Backoff, when set, replaces AckWait with a per-delivery ack wait.
	Backoff []time.Duration
	// MaxAckPending bounds the deliveries not yet settled, across all
	// consumers.
	MaxAckPending int
	// Storage is file (the zero value) or memory.
	Storage jetstream.StorageType
	// Replicas is the stream's replication factor (1 alone).
	Replicas int
	// FetchWait is how long one pull request waits on the server.
	FetchWait time.Duration
	// RetryDelay is the first delay of Retry and the delay after a handler
	// panicked; Retry doubles it on each attempt, up to MaxRetryDelay.
	RetryDelay time.Duration
	// MaxRetryDelay caps Retry's delay.
	MaxRetryDelay time.Duration
	// DeadSubject is the subject prefix under which the messages of this
	// stream are parked on the dead-letter stream; empty: redfix.dead.
	// followed by the stream's name in lower case.
	DeadSubject string
	// DeadStream is the dead-letter stream; empty: DefaultDeadStream.
	DeadStream string
	// WaitAside keeps a message that waits for its retry off the consumer:
	// the retry takes it off the stream and keeps it on the wait stream
	// until it is due, when Consume stores it on the stream again (its
	// attempts, its first storing and its message ID carried along). A
	// message waiting so takes none of MaxAckPending's deliveries and no
	// slot; one Nak'd with a delay holds one of MaxAckPending until it is
	// delivered again.
	WaitAside bool
	// WaitStream is where messages wait aside; empty: DefaultWaitStream.
	WaitStream string
	// WaitSubject is the subject under which this stream's messages wait;
	// empty: redfix.wait. followed by the stream's name in lower case.
	WaitSubject string
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = DefaultDuplicateWindow
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.FetchWait == 0 {
		c.FetchWait = DefaultFetchWait
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxRetryDelay == 0 {
		c.MaxRetryDelay = max(DefaultMaxRetryDelay, c.RetryDelay)
	}
	if c.DeadStream == "" {
		c.DeadStream = DefaultDeadStream
	}
	if c.DeadSubject == "" {
		c.DeadSubject = "redfix.dead." + strings.ToLower(c.Stream)
	}
	if c.WaitStream == "" {
		c.WaitStream = DefaultWaitStream
	}
	if c.WaitSubject == "" {
		c.WaitSubject = "redfix.wait." + strings.ToLower(c.Stream)
	}
	return c
}

// Validate reports every setting that the server would refuse or that makes
// no sense. Call it on a config with defaults applied.
func (c Config) Validate() error {
	var errs []error
	if c.Stream == "" || strings.ContainsAny(c.Stream, " \t.*>/\\") {
		errs = append(errs, fmt.Errorf("stream name %q: must be non-empty, without spaces, '.', '*', '>' or slashes", c.Stream))
	}
	if c.Consumer == "" || strings.ContainsAny(c.Consumer, " \t.*>/\\") {
		errs = append(errs, fmt.Errorf("consumer name %q: must be non-empty, without spaces, '.', '*', '>' or slashes", c.Consumer))
	}
	if c.Subject == "" || strings.ContainsAny(c.Subject, " \t*>") {
		errs = append(errs, fmt.Errorf("subject %q: must be a literal subject", c.Subject))
	}
	if !strings.HasPrefix(c.DeadSubject, "redfix.dead.") || strings.ContainsAny(c.DeadSubject, " \t*>") {
		errs = append(errs, fmt.Errorf("dead-letter subject %q: must be a literal subject under redfix.dead.", c.DeadSubject))
	}
	if !strings.HasPrefix(c.WaitSubject, "redfix.wait.") || strings.ContainsAny(c.WaitSubject, " \t*>") {
		errs = append(errs, fmt.Errorf("wait subject %q: must be a literal subject under redfix.wait.", c.WaitSubject))
	}
	if c.AckWait <= 0 {
		errs = append(errs, fmt.Errorf("ack wait %s: must be positive", c.AckWait))
	}
	if c.MaxDeliver < 1 && c.MaxDeliver != -1 {
		errs = append(errs, fmt.Errorf("max deliver %d: must be at least 1, or -1 with a max age", c.MaxDeliver))
	}
	if c.MaxDeliver == -1 && c.MaxAge <= 0 {
		errs = append(errs, errors.New("max deliver -1 needs a positive max age: retries must be bounded"))
	}
	if c.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("max age %s: must not be negative", c.MaxAge))
	}
	if c.DuplicateWindow <= 0 {
		errs = append(errs, fmt.Errorf("duplicate window %s: must be positive", c.DuplicateWindow))
	}
	if c.MaxDeliver > 0 && len(c.Backoff) > c.MaxDeliver {
		errs = append(errs, fmt.Errorf("backoff has %d values: must be at most max deliver (%d)", len(c.Backoff), c.MaxDeliver))
	}
	for i, d := range c.Backoff {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("backoff[%d] %s: must be positive", i, d))
		}
	}
	if c.MaxAckPending < 1 {
		errs = append(errs, fmt.Errorf("max ack pending %d: must be at least 1", c.MaxAckPending))
	}
	if c.Storage != jetstream.FileStorage && c.Storage != jetstream.MemoryStorage {
		errs = append(errs, fmt.Errorf("storage %v: must be file or memory", c.Storage))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas %d: must be 1 to 5", c.Replicas))
	}
	if c.FetchWait < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("fetch wait %s: must be at least 100ms", c.FetchWait))
	}
	if c.RetryDelay < 0 {
		errs = append(errs, fmt.Errorf("retry delay %s: must not be negative", c.RetryDelay))
	}
	if c.MaxRetryDelay < c.RetryDelay {
		errs = append(errs, fmt.Errorf("max retry delay %s: must be at least the retry delay (%s)", c.MaxRetryDelay, c.RetryDelay))
	}
	return errors.Join(errs...)
}
