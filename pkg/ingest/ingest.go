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
	"github.com/redfix/redfix/pkg/stream"
)

// Submission is one CI report about one commit of one repository, or (an
// event: Kind names its forge) one verified webhook delivery of a forge,
// which triage turns into a report itself through the forge's driver.
type Submission struct {
	// ID identifies the delivery (a webhook's delivery id, or the hash of
	// the content): the stream keeps one message per ID.
	ID string `json:"id"`
	// Kind is KindReport when empty; for an event, the name of the forge
	// driver whose webhook stored it ("github").
	Kind string `json:"kind,omitempty"`
	// Event is the event's name as its forge gives it and Payload its
	// body, for an event.
	Event   string          `json:"event,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Repo    string          `json:"repo"`
	Commit  string          `json:"commit"`
	Good    string          `json:"good,omitempty"` // the last green commit, if CI knows it
	Branch  string          `json:"branch,omitempty"`
	// Fork is the head repository ("owner/name") of a run that tested a
	// pull request from a fork; "" for the repository's own commits.
	// Triage repairs it only where the configuration handles forks.
	Fork     string    `json:"fork,omitempty"`
	Report   []byte    `json:"report"`
	Received time.Time `json:"received"`
	// Verified is set only by a route that authenticated the sender (a
	// forge's webhook whose signature checked out), never from a request's
	// own fields: such a repository needs no allowlist entry.
	Verified bool `json:"verified,omitempty"`
	// ReportObject names the object that holds Report when the report was
	// too large for one message (Report is then empty on the stream and
	// filled in before the handler sees the submission).
	ReportObject string `json:"report_object,omitempty"`
	// Parsed is the report as the intake parsed it when it accepted the
	// submission (see ForTriage), so that triage does not parse it again;
	// Report stays, the raw report for audit. ParsedObject names the
	// object that holds it when it did not fit in the message.
	Parsed       *report.Result `json:"parsed,omitempty"`
	ParsedObject string         `json:"parsed_object,omitempty"`
}

// KindReport is the kind of a test report (Report), as CI posts it; any
// other kind is a forge's event.
const KindReport = ""

// IsEvent reports whether s is a forge's webhook delivery (Event, Payload)
// rather than a report.
func (s Submission) IsEvent() bool { return s.Kind != KindReport }

// ErrInvalid marks a submission that will never be accepted as it is: it
// is classed permanent, and parked.
var ErrInvalid = stream.Permanent(errors.New("invalid submission"))

// ErrUntriageable marks a valid submission that triage cannot work on and
// that trying again will not change (its repository answers that it does
// not exist, its commit is not there): it is parked with the reason, and
// `bot replay` brings it back once that changed.
var ErrUntriageable = stream.Permanent(errors.New("cannot be triaged"))

// Check validates s and parses its report. The error says what is wrong.
// A forge's event has no report yet: it is checked for its event and
// payload and gives an empty result.
func Check(s Submission) (report.Result, error) {
	if s.IsEvent() {
		switch {
		case s.Event == "":
			return report.Result{}, fmt.Errorf("%w: %s delivery without an event name", ErrInvalid, s.Kind)
		case !json.Valid(s.Payload):
			return report.Result{}, fmt.Errorf("%w: %s delivery whose payload is not JSON", ErrInvalid, s.Kind)
		}
		return report.Result{}, nil
	}
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

// Screen is Check for admission: it refuses what Check refuses, with the
// same reasons, but parses a report only where its format has no cheaper
// check (report.Screen): parsed says whether res is the parsed report or
// only its format. Triage parses a report that was not (Checked).
func Screen(s Submission) (res report.Result, parsed bool, err error) {
	if s.Kind != KindReport {
		res, err = Check(s)
		return res, err == nil, err
	}
	switch {
	case s.Repo == "":
		return report.Result{}, false, fmt.Errorf("%w: no repository", ErrInvalid)
	case s.Commit == "":
		return report.Result{}, false, fmt.Errorf("%w: no commit", ErrInvalid)
	}
	res, parsed, err = report.Screen(s.Report)
	if err != nil {
		return report.Result{}, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return res, parsed, nil
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

// Config names the stream and sets how submissions are retried.
type Config struct {
	Stream   string
	Subject  string
	Consumer string
	AckWait  time.Duration
	// MaxDeliver bounds the deliveries of one submission; 0 means no bound
	// other than MaxAge.
	MaxDeliver      int
	DuplicateWindow time.Duration
	Storage         jetstream.StorageType
	// Replicas is how many copies of the stream, its dead letters and the
	// object store of large reports a cluster keeps (1 alone).
	Replicas int
	// RetryDelay is how long the redelivery of a submission whose triage
	// failed waits, doubled on each attempt up to MaxRetryDelay: 5 s, 10 s,
	// 20 s, … 5 min by default.
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// MaxAge is how long a failing submission is retried, from when it was
	// stored, before it is parked on the dead-letter stream (24 h by
	// default).
	MaxAge time.Duration
	// Heartbeat is how often a submission being triaged tells the server
	// it is alive (0: a third of AckWait).
	Heartbeat time.Duration
}

// Defaults of Config.
const (
	DefaultStream        = "REDFIX_REPORTS"
	DefaultSubject       = "redfix.reports"
	DefaultConsumer      = "triage"
	DefaultAckWait       = time.Minute
	DefaultRetryDelay    = 5 * time.Second
	DefaultMaxRetryDelay = 5 * time.Minute
	DefaultMaxAge        = 24 * time.Hour
)

func (c *Config) defaults() {
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = -1
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 24 * time.Hour
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxRetryDelay <= 0 {
		c.MaxRetryDelay = max(DefaultMaxRetryDelay, c.RetryDelay)
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
}

// StreamConfig is the stream under the intake (for stream.Bind), defaults
// applied.
func (c Config) StreamConfig() stream.Config {
	c.defaults()
	return c.stream()
}

func (c Config) stream() stream.Config {
	return stream.Config{
		Stream:          c.Stream,
		Description:     "redfix test reports, stored before CI is answered",
		Subject:         c.Subject,
		Consumer:        c.Consumer,
		AckWait:         c.AckWait,
		MaxDeliver:      c.MaxDeliver,
		MaxAge:          c.MaxAge,
		DuplicateWindow: c.DuplicateWindow,
		MaxAckPending:   64,
		Storage:         c.Storage,
		Replicas:        c.Replicas,
		RetryDelay:      c.RetryDelay,
		MaxRetryDelay:   c.MaxRetryDelay,
		FetchWait:       2 * time.Second,
		// A report waiting for its retry (its repository cannot be
		// fetched, its store is down) takes no place among the 64: the
		// others are triaged meanwhile.
		WaitAside: true,
	}
}

// Intake is the reports stream.
type Intake struct {
	s     *stream.Stream
	blobs jetstream.ObjectStore
	cfg   Config
	log   *zap.Logger
}

// Open creates (or updates) the stream and its consumer.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Intake, error) {
	cfg.defaults()
	if log == nil {
		log = zap.NewNop()
	}
	s, err := stream.Open(ctx, js, cfg.stream(), log)
	if err != nil {
		return nil, err
	}
	blobs, err := openBlobs(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	return &Intake{s: s, blobs: blobs, cfg: cfg, log: log}, nil
}

// Stream is the stream under the intake (for its dead letters).
func (in *Intake) Stream() *stream.Stream { return in.s }

// Submit stores s durably. duplicate reports that a submission with the same
// ID was already stored and not parked since.
func (in *Intake) Submit(ctx context.Context, s Submission) (duplicate bool, err error) {
	if s.ID == "" {
		s.ID = ContentID(s)
	}
	if s.Received.IsZero() {
		s.Received = time.Now().UTC()
	}
	if err := in.stash(ctx, &s); err != nil {
		return false, err
	}
	if err := in.stashParsed(ctx, &s); err != nil {
		return false, err
	}
	data, hdr, err := encode(s)
	if err != nil {
		return false, err
	}
	dup, err := in.s.Publish(ctx, s.ID, data, hdr)
	if err != nil {
		return false, fmt.Errorf("store submission %s: %w", s.ID, err)
	}
	return dup, nil
}

// ackTimeout bounds the wait for the server to confirm an ack.
const ackTimeout = 10 * time.Second

// Attempt says which delivery of a submission this is.
type Attempt struct {
	N    int
	Last bool // no redelivery follows a failure of this one: it is parked
}

// Handler triages one submission. Returning an error asks for redelivery
// with a growing delay, until MaxAge (or MaxDeliver) is reached; the
// submission is then parked on the dead-letter stream. Wrap the error with
// ErrInvalid to park it now.
type Handler func(ctx context.Context, s Submission, a Attempt) error

// Run feeds stored submissions to handle, one at a time, until ctx ends.
// While handle runs, the submission's delivery is kept alive with
// heartbeats, so a long triage is not handed to another instance. Errors
// from the server (NATS down) are logged and retried.
func (in *Intake) Run(ctx context.Context, handle Handler) error {
	return in.s.Consume(ctx, 1, func(ctx context.Context, d *stream.Delivery) {
		in.handle(ctx, d, handle)
	})
}

func (in *Intake) handle(ctx context.Context, d *stream.Delivery, handle Handler) {
	s, err := Decode(d.Data(), d.Header())
	if err != nil {
		if _, perr := d.Settle(ctx, stream.Permanent(fmt.Errorf("undecodable: %w", err))); perr != nil {
			d.Log().Error("undecodable submission; parking it failed", zap.Error(err), zap.NamedError("park_error", perr))
		}
		return
	}
	d.WithLog(zap.String("submission", s.ID), zap.String("repo", s.Repo), zap.String("commit", s.Commit))
	log := d.Log()
	a := Attempt{N: d.Attempt, Last: d.LastAttempt()}
	stop := d.KeepAlive(ctx, in.cfg.Heartbeat)
	err = in.fetch(ctx, &s)
	if err == nil {
		err = in.fetchParsed(ctx, &s)
	}
	if err == nil {
		err = handle(ctx, s, a)
	}
	stop()
	// Settled the one way every stream consumer settles: by the error's
	// class (ack, hand back, retry with the stream's delay, or park).
	settled, serr := d.Settle(ctx, err)
	switch {
	case serr != nil:
		log.Error("settling the submission failed: it comes back after the ack wait", zap.String("settlement", settled.String()), zap.NamedError("handling_error", err), zap.Error(serr))
	case settled == stream.SettledAck:
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer cancel()
		if err := in.dropBlob(sctx, s); err != nil {
			log.Warn("triaged submission's report object left behind", zap.Error(err))
		}
	case settled == stream.SettledPark:
		// The delivery's logger carries the attempt already.
		log.Error("submission parked", zap.Error(err))
	case settled == stream.SettledRetry:
		log.Warn("triage failed; will retry", zap.Duration("retry_in", d.RetryDelay()), zap.Error(err))
	}
}
