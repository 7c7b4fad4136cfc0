// Package stream is redfix's one way to consume a JetStream stream: a
// work-queue stream with message-ID deduplication, a durable pull consumer
// shared by every instance, deliveries settled exactly once (ack, nak with a
// growing delay or a wait aside, off the consumer, until the retry is due,
// term), InProgress heartbeats while a handler works, and a
// dead-letter stream where a message that will not be retried again is
// parked, never dropped, until someone replays it. The job queue and the
// report intake are both built on it.
package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Stream is an open stream with its consumer.
type Stream struct {
	js   jetstream.JetStream
	cons jetstream.Consumer
	// wait is the consumer of this stream's messages waiting aside (nil
	// without Config.WaitAside, and on a Bind).
	wait jetstream.Consumer
	cfg  Config
	log  *zap.Logger
}

// Open creates or updates the stream, its durable consumer and the
// dead-letter stream that cfg describes, so that every instance that opens
// it agrees on them. It refuses a server older than MinServerVersion; js's
// connection must be up.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Stream, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	v, err := CheckServer(js.Conn())
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	if v.Less(termReasonVersion) {
		log.Info("nats-server before "+termReasonVersion.String()+": terminations are sent without their reason, which only redfix's log keeps",
			zap.String("stream", cfg.Stream), zap.String("nats_server", v.String()))
	}
	err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: cfg.Description,
		Subjects:    []string{cfg.Subject},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update stream %s: %w", cfg.Stream, err)
	}
	err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        cfg.DeadStream,
		Description: "redfix messages parked after their last retry; replay them with `bot replay`",
		Subjects:    []string{DeadSubjects},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update dead-letter stream %s: %w", cfg.DeadStream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   cfg.Description,
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
	var wait jetstream.Consumer
	if cfg.WaitAside {
		if wait, err = openWait(ctx, js, cfg); err != nil {
			return nil, err
		}
	}
	log = log.With(zap.String("stream", cfg.Stream), zap.String("consumer", cfg.Consumer))
	return &Stream{js: js, cons: cons, wait: wait, cfg: cfg, log: log}, nil
}

// ErrNotFound is returned by Bind when the server holds no such stream or
// consumer.
var ErrNotFound = errors.New("not found")

// Bind uses the stream, its consumer and the dead-letter stream that cfg
// names as the server holds them, creating and changing nothing: for
// commands that read what the services left (`bot replay`), for which an
// empty stream made on the wrong server would be a false all-clear. Each
// one missing is an error wrapping ErrNotFound.
func Bind(ctx context.Context, js jetstream.JetStream, cfg Config, log *zap.Logger) (*Stream, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	if _, err := CheckServer(js.Conn()); err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	missing := func(what string, err error) error {
		if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("%s: %w on this NATS server", what, ErrNotFound)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := js.Stream(ctx, cfg.Stream); err != nil {
		return nil, missing("stream "+cfg.Stream, err)
	}
	if _, err := js.Stream(ctx, cfg.DeadStream); err != nil {
		return nil, missing("dead-letter stream "+cfg.DeadStream, err)
	}
	cons, err := js.Consumer(ctx, cfg.Stream, cfg.Consumer)
	if err != nil {
		return nil, missing(fmt.Sprintf("consumer %s of stream %s", cfg.Consumer, cfg.Stream), err)
	}
	log = log.With(zap.String("stream", cfg.Stream), zap.String("consumer", cfg.Consumer))
	return &Stream{js: js, cons: cons, cfg: cfg, log: log}, nil
}

// Config is the stream's configuration, defaults applied.
func (s *Stream) Config() Config { return s.cfg }

// JetStream is the client the stream was opened with.
func (s *Stream) JetStream() jetstream.JetStream { return s.js }

// Publish stores data with msgID as its message ID. duplicate is true when
// the stream already holds, or has handled, a message with that ID within
// the duplicate window. A message with that ID that was parked is not a
// duplicate: data is stored again under a fresh ID and the parked copy is
// removed, so that a client's re-post after a failure is handled.
func (s *Stream) Publish(ctx context.Context, msgID string, data []byte, hdr nats.Header) (duplicate bool, err error) {
	ack, err := s.publish(ctx, msgID, data, hdr)
	if err != nil {
		return false, err
	}
	if !ack.Duplicate {
		return false, nil
	}
	parked, err := s.parkedSeq(ctx, msgID)
	if err != nil {
		return true, fmt.Errorf("look up parked message %s: %w", msgID, err)
	}
	if parked == 0 {
		return true, nil
	}
	if _, err := s.publish(ctx, replayID(msgID, parked), data, hdr); err != nil {
		return false, err
	}
	s.dropParked(ctx, parked)
	s.log.Info("parked message posted again; stored anew", zap.String("msg_id", msgID), zap.Uint64("parked_seq", parked))
	return false, nil
}

func (s *Stream) publish(ctx context.Context, msgID string, data []byte, hdr nats.Header) (*jetstream.PubAck, error) {
	m := nats.NewMsg(s.cfg.Subject)
	m.Data = data
	for k, v := range hdr {
		m.Header[k] = v
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(s.cfg.Stream)}
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	// Sent without waiting, then its acknowledgement awaited: the
	// publishes of concurrent callers share the connection's one reply
	// subscription and are flushed together, and a caller still returns
	// only once the server stored its message.
	fut, err := s.js.PublishMsgAsync(m, opts...)
	if err != nil {
		return nil, fmt.Errorf("publish %s on %s: %w", msgID, s.cfg.Subject, err)
	}
	wait := time.NewTimer(PublishTimeout)
	defer wait.Stop()
	select {
	case ack := <-fut.Ok():
		return ack, nil
	case err := <-fut.Err():
		return nil, fmt.Errorf("publish %s on %s: %w", msgID, s.cfg.Subject, err)
	case <-wait.C:
		return nil, fmt.Errorf("publish %s on %s: no acknowledgement within %s", msgID, s.cfg.Subject, PublishTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("publish %s on %s: %w", msgID, s.cfg.Subject, ctx.Err())
	}
}

// PublishTimeout bounds the wait for a publish's acknowledgement, as the
// client's own timeout bounds a synchronous publish. Give the JetStream
// client the same (jetstream.WithPublishAsyncTimeout), so that it drops
// what it keeps for an acknowledgement that never comes.
const PublishTimeout = 5 * time.Second

// Lag is the number of messages waiting or in flight: not yet delivered,
// delivered and not yet settled, and waiting aside for a retry.
func (s *Stream) Lag(ctx context.Context) (uint64, error) {
	info, err := s.cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("read lag of %s/%s: %w", s.cfg.Stream, s.cfg.Consumer, err)
	}
	waiting, err := s.waitingLag(ctx)
	if err != nil {
		return 0, err
	}
	return info.NumPending + uint64(info.NumAckPending) + waiting, nil
}

// Depth is one reading of a stream's backlog.
type Depth struct {
	// Lag is the messages waiting or in flight (as Lag).
	Lag uint64
	// Oldest is when the oldest message still on the stream was stored
	// (waiting or held by a consumer); zero when the stream is empty. A
	// work-queue stream drops a message once it is acked, so this is the
	// oldest unsettled one. A message that waited aside for a retry counts
	// from when it was first stored: the first on the stream and the first
	// waiting are read for it.
	Oldest time.Time
}

// Depth reads the lag and the oldest message's time in one go.
func (s *Stream) Depth(ctx context.Context) (Depth, error) {
	lag, err := s.Lag(ctx)
	if err != nil {
		return Depth{}, err
	}
	st, err := s.js.Stream(ctx, s.cfg.Stream)
	if err != nil {
		return Depth{}, fmt.Errorf("read stream %s: %w", s.cfg.Stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return Depth{}, fmt.Errorf("read stream %s: %w", s.cfg.Stream, err)
	}
	d := Depth{Lag: lag}
	if info.State.Msgs > 0 {
		d.Oldest = info.State.FirstTime
		if first, err := st.GetMsg(ctx, info.State.FirstSeq); err == nil {
			d.Oldest = earlier(d.Oldest, firstStored(first.Header))
		}
	}
	waiting, err := s.oldestWaiting(ctx)
	if err != nil {
		return Depth{}, err
	}
	d.Oldest = earlier(d.Oldest, waiting)
	return d, nil
}

// earlier is the earlier of two times, a zero one not counted.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// Ready reports whether the consumer answers, for readiness probes.
func (s *Stream) Ready(ctx context.Context) error {
	if _, err := s.cons.Info(ctx); err != nil {
		return fmt.Errorf("stream %s/%s: %w", s.cfg.Stream, s.cfg.Consumer, err)
	}
	return nil
}

// Next waits for one delivery and returns it, or returns ctx's error once
// ctx is done. The delivery must then be settled.
func (s *Stream) Next(ctx context.Context) (*Delivery, error) {
	for {
		msg, err := s.fetch(ctx)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue // the pull request expired empty
		}
		return s.delivery(msg), nil
	}
}

// fetch pulls at most one message, waiting at most FetchWait. It returns a
// nil message when none came in that time.
func (s *Stream) fetch(ctx context.Context) (jetstream.Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 10*time.Millisecond {
		// Too short for a pull request to reach the server and expire.
		<-ctx.Done()
		return nil, ctx.Err()
	}
	pollCtx, cancel := context.WithTimeout(ctx, s.cfg.FetchWait)
	defer cancel()
	msg, err := s.cons.Next(jetstream.FetchContext(pollCtx))
	switch {
	case err == nil:
		return msg, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, jetstream.ErrNoMessages):
		return nil, nil
	default:
		return nil, fmt.Errorf("fetch from %s/%s: %w", s.cfg.Stream, s.cfg.Consumer, err)
	}
}

func (s *Stream) delivery(msg jetstream.Msg) *Delivery {
	d := &Delivery{Attempt: 1, MaxDeliver: s.cfg.MaxDeliver, msg: msg, s: s}
	if h := msg.Headers(); h != nil {
		d.MsgID = h.Get(jetstream.MsgIDHeader)
	}
	if meta, err := msg.Metadata(); err == nil {
		d.Attempt = int(meta.NumDelivered)
		d.Enqueued = meta.Timestamp
		d.StreamSeq = meta.Sequence.Stream
	} else {
		d.Enqueued = time.Now()
	}
	afterWaiting(d, msg.Headers())
	d.log = s.log.With(zap.Uint64("seq", d.StreamSeq), zap.Int("attempt", d.Attempt))
	return d
}

// afterWaiting gives a message stored again after waiting aside what it
// had before: its attempts, when it was first stored, its message ID.
func afterWaiting(d *Delivery, h nats.Header) {
	prior, err := strconv.Atoi(h.Get(HeaderPriorAttempts))
	if err != nil || prior < 1 {
		return
	}
	d.Attempt += prior
	if t, err := time.Parse(time.RFC3339Nano, h.Get(HeaderEnqueued)); err == nil {
		d.Enqueued = t
	}
	if id := h.Get(HeaderOriginMsgID); id != "" {
		d.MsgID = id
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ensureStream creates the stream cfg describes, or updates it where it
// differs from cfg; a stream that already is as cfg says is left alone.
// Every instance opens the same streams as it starts, and an update the
// server did not need raced, inside nats-server, with another instance's
// consumer being created on the same stream (seen by the race detector in
// a test that starts the bot and a worker together).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if st, err := js.Stream(ctx, cfg.Name); err == nil {
		if info := st.CachedInfo(); info != nil && sameStream(info.Config, cfg) {
			return nil
		}
	}
	_, err := js.CreateOrUpdateStream(ctx, cfg)
	return err
}

// sameStream reports whether have already is what want sets.
func sameStream(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention && have.Storage == want.Storage &&
		max(have.Replicas, 1) == max(want.Replicas, 1) && (want.Duplicates == 0 || have.Duplicates == want.Duplicates)
}
