// Package ingest makes test reports durable before anyone acts on them: a
// report accepted by the HTTP API or a webhook is validated, parsed, and
// stored on a JetStream stream, and only then acknowledged to CI. Triage
// consumes the stream; a crash between the two loses nothing.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/report"
)

// Submission is one CI report about one commit of one repository.
type Submission struct {
	// ID identifies the delivery (a webhook's delivery id, or the hash of
	// the content): the stream keeps one message per ID.
	ID       string    `json:"id"`
	Repo     string    `json:"repo"`
	Commit   string    `json:"commit"`
	Good     string    `json:"good,omitempty"` // the last green commit, if CI knows it
	Branch   string    `json:"branch,omitempty"`
	Report   []byte    `json:"report"`
	Received time.Time `json:"received"`
}

// ErrInvalid marks a submission that will never be accepted as it is.
var ErrInvalid = errors.New("invalid submission")

// Check validates s and parses its report. The error says what is wrong.
func Check(s Submission) (report.Result, error) {
	switch {
	case s.Repo == "":
		return report.Result{}, fmt.Errorf("%w: no repository", ErrInvalid)
	case s.Commit == "":
		return report.Result{}, fmt.Errorf("%w: no commit", ErrInvalid)
	}
	res, err := report.Parse(s.Report)
	if err != nil {
		return report.Result{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return res, nil
}

// ContentID is the default ID: the hash of what the submission says.
func ContentID(s Submission) string {
	h := sha256.New()
	for _, part := range []string{s.Repo, s.Commit, s.Good, s.Branch} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(s.Report)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Config names the stream.
type Config struct {
	Stream          string
	Subject         string
	Consumer        string
	AckWait         time.Duration
	MaxDeliver      int
	DuplicateWindow time.Duration
	Storage         jetstream.StorageType
	// RetryDelay is how long the redelivery of a submission whose triage
	// failed waits, times the attempt: 5 s, 10 s, … by default.
	RetryDelay time.Duration
}

func (c *Config) defaults() {
	if c.Stream == "" {
		c.Stream = "REDFIX_REPORTS"
	}
	if c.Subject == "" {
		c.Subject = "redfix.reports"
	}
	if c.Consumer == "" {
		c.Consumer = "triage"
	}
	if c.AckWait == 0 {
		c.AckWait = 10 * time.Minute
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 3
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 24 * time.Hour
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = 5 * time.Second
	}
}

// Intake is the reports stream.
type Intake struct {
	js       jetstream.JetStream
	cfg      Config
	consumer jetstream.Consumer
	log      *zap.Logger
}

// Open creates (or updates) the stream and its consumer.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Intake, error) {
	cfg.defaults()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       cfg.Stream,
		Subjects:   []string{cfg.Subject},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    cfg.Storage,
		Duplicates: cfg.DuplicateWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", cfg.Stream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: 64,
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", cfg.Consumer, err)
	}
	return &Intake{js: js, cfg: cfg, consumer: cons, log: log}, nil
}

// Submit stores s durably. duplicate reports that a submission with the same
// ID was already stored.
func (in *Intake) Submit(ctx context.Context, s Submission) (duplicate bool, err error) {
	if s.ID == "" {
		s.ID = ContentID(s)
	}
	if s.Received.IsZero() {
		s.Received = time.Now().UTC()
	}
	data, err := json.Marshal(s)
	if err != nil {
		return false, fmt.Errorf("encode submission %s: %w", s.ID, err)
	}
	ack, err := in.js.Publish(ctx, in.cfg.Subject, data, jetstream.WithMsgID(s.ID))
	if err != nil {
		return false, fmt.Errorf("store submission %s: %w", s.ID, err)
	}
	return ack.Duplicate, nil
}

// ackTimeout bounds the wait for the server to confirm an ack.
const ackTimeout = 10 * time.Second

// Attempt says which delivery of a submission this is.
type Attempt struct {
	N    int
	Last bool // no redelivery follows a failure of this one
}

// Handler triages one submission. Returning an error asks for redelivery
// (up to the configured bound, after which the submission is dropped and
// logged); wrap it with ErrInvalid to drop it now.
type Handler func(ctx context.Context, s Submission, a Attempt) error

// Run feeds stored submissions to handle, one at a time, until ctx ends.
func (in *Intake) Run(ctx context.Context, handle Handler) error {
	for {
		batch, err := in.consumer.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fetch submissions: %w", err)
		}
		for msg := range batch.Messages() {
			in.handle(ctx, msg, handle)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
			in.log.Warn("fetch submissions", zap.Error(err))
		}
	}
}

func (in *Intake) handle(ctx context.Context, msg jetstream.Msg, handle Handler) {
	var s Submission
	if err := json.Unmarshal(msg.Data(), &s); err != nil {
		in.log.Error("dropping undecodable submission", zap.Error(err))
		_ = msg.TermWithReason("undecodable: " + err.Error())
		return
	}
	log := in.log.With(zap.String("submission", s.ID), zap.String("repo", s.Repo), zap.String("commit", s.Commit))
	a := Attempt{N: 1}
	if meta, err := msg.Metadata(); err == nil {
		a.N = int(meta.NumDelivered)
	}
	a.Last = a.N >= in.cfg.MaxDeliver
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("triage panicked: %v", r)
			}
		}()
		return handle(ctx, s, a)
	}()
	switch {
	case err == nil:
		// The submission was triaged: record that even if the intake is
		// shutting down, or it would be triaged again after AckWait.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer cancel()
		if err := msg.DoubleAck(actx); err != nil {
			log.Warn("ack submission", zap.Error(err))
		}
	case errors.Is(err, ErrInvalid):
		log.Error("dropping submission", zap.Error(err))
		_ = msg.TermWithReason(err.Error())
	case ctx.Err() != nil:
		// Shutting down: let another triage instance take it now.
		_ = msg.Nak()
	case a.Last:
		log.Error("triage failed on its last attempt; dropping the submission", zap.Int("attempt", a.N), zap.Error(err))
		_ = msg.TermWithReason("gave up: " + err.Error())
	default:
		log.Warn("triage failed; will retry", zap.Int("attempt", a.N), zap.Error(err))
		_ = msg.NakWithDelay(time.Duration(a.N) * in.cfg.RetryDelay)
	}
}
