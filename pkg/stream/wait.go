package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// A message that waits for its retry aside (Config.WaitAside) is taken off
// its stream and kept on the wait stream until it is due; it is then
// stored on its stream again. A Nak with a delay would keep it among the
// consumer's unsettled deliveries, where MaxAckPending counts it: enough
// messages waiting for their retries (300 reports of repositories that
// cannot be fetched) would hold the whole window, and nothing new would be
// delivered until they were parked. Aside, waiting takes no delivery and
// no slot. What the retries need travels along in headers: the attempts
// so far (so that Attempt counts on), when the message was first stored
// (MaxAge), and its message ID (parking and re-posting find it).

// Headers of a message waiting aside, and of one stored again after it.
const (
	// HeaderPriorAttempts is the deliveries the message had before it was
	// stored again: its Attempt counts on from there.
	HeaderPriorAttempts = "Redfix-Prior-Attempts"
	// HeaderDue is when a waiting message is stored on its stream again.
	HeaderDue = "Redfix-Due"
)

// Defaults of the wait stream.
const (
	// DefaultWaitStream is the stream where messages of every stream with
	// WaitAside wait, each under its own subject.
	DefaultWaitStream = "REDFIX_WAIT"
	// WaitSubjects is the subject space of the wait stream.
	WaitSubjects = "redfix.wait.>"
	// waitPending bounds the waiting messages the wait consumer holds at
	// once; more wait on the wait stream, undelivered, which delays their
	// retry and nothing else.
	waitPending = 10000
	// waitAckWait is how long the wait consumer's holder has to store a
	// due message again.
	waitAckWait = time.Minute
	// waitFailDelay is when a due message whose storing failed is tried
	// again.
	waitFailDelay = 5 * time.Second
)

// openWait creates or updates the wait stream and this stream's consumer
// of it.
func openWait(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.Consumer, error) {
	err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        cfg.WaitStream,
		Description: "redfix messages waiting for their retry, off their consumer",
		Subjects:    []string{WaitSubjects},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update wait stream %s: %w", cfg.WaitStream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.WaitStream, jetstream.ConsumerConfig{
		Durable:       cfg.Consumer + "-wait",
		Description:   "stores the messages of " + cfg.Stream + " again once their retry is due",
		FilterSubject: cfg.WaitSubject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       waitAckWait,
		MaxDeliver:    -1,
		MaxAckPending: waitPending,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update consumer %s-wait on stream %s: %w", cfg.Consumer, cfg.WaitStream, err)
	}
	return cons, nil
}

// retry has the message delivered again after delay: aside, when the
// stream says so, else with a Nak.
func (d *Delivery) retry(ctx context.Context, delay time.Duration) error {
	if !d.s.cfg.WaitAside || d.s.wait == nil {
		return d.Nak(ctx, delay)
	}
	return d.waitAside(ctx, delay)
}

// waitAside stores a copy of the message on the wait stream, due after
// delay, and then takes it off its stream (an ack). A crash between the
// two leaves the message on its stream, delivered again after AckWait; its
// copy's message ID (the stream sequence) keeps a second copy out.
func (d *Delivery) waitAside(ctx context.Context, delay time.Duration) error {
	if d.settled.Load() {
		return fmt.Errorf("retry %s: %w", d.what(), ErrSettled)
	}
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	m := nats.NewMsg(d.s.cfg.WaitSubject)
	m.Data = d.msg.Data()
	for k, v := range d.msg.Headers() {
		if k != jetstream.MsgIDHeader {
			m.Header[k] = v
		}
	}
	m.Header.Set(HeaderOriginMsgID, d.originID())
	m.Header.Set(HeaderPriorAttempts, strconv.Itoa(d.Attempt))
	m.Header.Set(HeaderEnqueued, d.Enqueued.UTC().Format(time.RFC3339Nano))
	m.Header.Set(HeaderDue, time.Now().Add(delay).UTC().Format(time.RFC3339Nano))
	waitID := fmt.Sprintf("wait-%s-%d", d.s.cfg.Stream, d.StreamSeq)
	if _, err := d.s.js.PublishMsg(ctx, m, jetstream.WithMsgID(waitID), jetstream.WithExpectStream(d.s.cfg.WaitStream)); err != nil {
		return fmt.Errorf("retry %s: set it aside: %w", d.what(), err)
	}
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("retry %s: set aside, but not taken off its stream: %w", d.what(), err)
	}
	return nil
}

// originID is the message ID the message was first published with (or its
// sequence, for one published without).
func (d *Delivery) originID() string {
	if d.MsgID != "" {
		return d.MsgID
	}
	return "seq-" + strconv.FormatUint(d.StreamSeq, 10)
}

// returnWaiting stores the messages that wait aside on their stream again
// once each is due, until ctx ends; a message not due yet is held by the
// wait consumer until it is (a Nak with the time left). Consume runs it.
func (s *Stream) returnWaiting(ctx context.Context) {
	if s.wait == nil {
		return
	}
	retry := minRetry
	for ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, s.cfg.FetchWait)
		msg, err := s.wait.Next(jetstream.FetchContext(pollCtx))
		cancel()
		switch {
		case ctx.Err() != nil:
			if msg != nil {
				_ = msg.Nak()
			}
			return
		case err == nil:
			retry = minRetry
			s.returnOne(ctx, msg)
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, jetstream.ErrNoMessages):
		default:
			s.log.Warn("fetch waiting messages; retrying", zap.Error(err), zap.Duration("retry_in", retry))
			if !sleep(ctx, retry) {
				return
			}
			retry = min(2*retry, maxRetry)
		}
	}
}

// returnOne stores one waiting message on its stream again when it is
// due, under a message ID of its own (the original's was seen), and then
// takes it off the wait stream.
func (s *Stream) returnOne(ctx context.Context, msg jetstream.Msg) {
	h := msg.Headers()
	due, err := time.Parse(time.RFC3339Nano, h.Get(HeaderDue))
	if err != nil {
		due = time.Now() // not ours to keep: back it goes
	}
	if left := time.Until(due); left > 0 {
		if err := msg.NakWithDelay(left); err != nil {
			s.log.Warn("hold a waiting message", zap.Error(err))
		}
		return
	}
	hdr := nats.Header{}
	for k, v := range h {
		if k != HeaderDue && k != jetstream.MsgIDHeader {
			hdr[k] = v
		}
	}
	id := h.Get(HeaderOriginMsgID) + "~retry-" + h.Get(HeaderPriorAttempts)
	if _, err := s.publish(ctx, id, msg.Data(), hdr); err != nil {
		s.log.Warn("store a due message again; trying later", zap.String("msg_id", id), zap.Error(err))
		_ = msg.NakWithDelay(waitFailDelay)
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		// Stored again already: a second copy would carry the same
		// message ID, which the stream drops.
		s.log.Warn("take a returned message off the wait stream", zap.String("msg_id", id), zap.Error(err))
	}
}

// firstStored is when a message that waited aside was first stored (zero
// for one that never waited).
func firstStored(h nats.Header) time.Time {
	if h.Get(HeaderPriorAttempts) == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, h.Get(HeaderEnqueued))
	return t
}

// oldestWaiting is when the first of this stream's messages waiting aside
// was first stored (zero when none waits).
func (s *Stream) oldestWaiting(ctx context.Context) (time.Time, error) {
	if s.wait == nil {
		return time.Time{}, nil
	}
	st, err := s.js.Stream(ctx, s.cfg.WaitStream)
	if err != nil {
		return time.Time{}, fmt.Errorf("read wait stream %s: %w", s.cfg.WaitStream, err)
	}
	m, err := st.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(s.cfg.WaitSubject))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read wait stream %s: %w", s.cfg.WaitStream, err)
	}
	return firstStored(m.Header), nil
}

// waitingLag is the messages of this stream waiting aside.
func (s *Stream) waitingLag(ctx context.Context) (uint64, error) {
	if s.wait == nil {
		return 0, nil
	}
	info, err := s.wait.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the waiting messages of %s: %w", s.cfg.Stream, err)
	}
	return info.NumPending + uint64(info.NumAckPending), nil
}
