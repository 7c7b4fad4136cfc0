package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Headers of a parked message, besides the original's own.
const (
	HeaderOriginStream = "Redfix-Origin-Stream"
	HeaderOriginMsgID  = "Redfix-Origin-Msg-Id"
	HeaderReason       = "Redfix-Parked-Reason"
	HeaderAttempts     = "Redfix-Parked-Attempts"
	HeaderEnqueued     = "Redfix-Enqueued"
)

// idToken turns a message ID into one subject token.
func idToken(msgID string) string {
	sum := sha256.Sum256([]byte(msgID))
	return hex.EncodeToString(sum[:16])
}

// deadSubject is where a message with msgID is parked.
func (s *Stream) deadSubject(msgID string) string {
	return s.cfg.DeadSubject + "." + idToken(msgID)
}

// replayID is the fresh message ID of a parked message stored again, so
// that the duplicate window does not swallow it.
func replayID(msgID string, parkedSeq uint64) string {
	return msgID + "~replay-" + strconv.FormatUint(parkedSeq, 10)
}

// Park moves the message to the dead-letter stream, with reason, and then
// removes it from its own stream (an ack: the reason is kept on the parked
// copy, never sent to the server). It stays parked until replayed. A crash
// between the two steps parks it twice at most once (the copy's message ID
// is the original's stream sequence).
func (d *Delivery) Park(ctx context.Context, reason string) error {
	if d.settled.Load() {
		return fmt.Errorf("park %s: %w", d.what(), ErrSettled)
	}
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	id := d.MsgID
	if id == "" {
		id = "seq-" + strconv.FormatUint(d.StreamSeq, 10)
	}
	m := nats.NewMsg(d.s.deadSubject(id))
	m.Data = d.msg.Data()
	for k, v := range d.msg.Headers() {
		if k == jetstream.MsgIDHeader {
			continue
		}
		m.Header[k] = v
	}
	m.Header.Set(HeaderOriginStream, d.s.cfg.Stream)
	m.Header.Set(HeaderOriginMsgID, id)
	m.Header.Set(HeaderReason, truncate(reason, maxReason))
	m.Header.Set(HeaderAttempts, strconv.Itoa(d.Attempt))
	m.Header.Set(HeaderEnqueued, d.Enqueued.UTC().Format(time.RFC3339Nano))
	parkID := fmt.Sprintf("park-%s-%d", d.s.cfg.Stream, d.StreamSeq)
	if _, err := d.s.js.PublishMsg(ctx, m, jetstream.WithMsgID(parkID), jetstream.WithExpectStream(d.s.cfg.DeadStream)); err != nil {
		return fmt.Errorf("park %s: %w", d.what(), err)
	}
	// An ack, not a termination, takes it off its stream: every server
	// version confirms an ack, while one before 2.10 ignores a termination
	// with a reason and would deliver the message again after AckWait, to
	// be triaged and parked again, for good.
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("park %s: copied to %s, but not removed from its stream: %w", d.what(), d.s.cfg.DeadStream, err)
	}
	d.s.log.Error("message parked on the dead-letter stream; replay it with `bot replay`",
		zap.String("msg_id", id), zap.Uint64("seq", d.StreamSeq), zap.Int("attempt", d.Attempt), zap.String("reason", reason))
	return nil
}

// parkedSeq is the dead-letter stream's sequence of the message parked
// under msgID, or 0 when none is.
func (s *Stream) parkedSeq(ctx context.Context, msgID string) (uint64, error) {
	st, err := s.js.Stream(ctx, s.cfg.DeadStream)
	if err != nil {
		return 0, fmt.Errorf("open dead-letter stream: %w", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, s.deadSubject(msgID))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

func (s *Stream) dropParked(ctx context.Context, seq uint64) {
	st, err := s.js.Stream(ctx, s.cfg.DeadStream)
	if err == nil {
		err = st.DeleteMsg(ctx, seq)
	}
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		s.log.Warn("remove a parked message that was stored again; a replay would store it twice", zap.Uint64("parked_seq", seq), zap.Error(err))
	}
}

// Parked is a message on the dead-letter stream.
type Parked struct {
	Seq      uint64    `json:"seq"`
	MsgID    string    `json:"msg_id"`
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	Enqueued time.Time `json:"enqueued"`
	Parked   time.Time `json:"parked"`
	Size     int       `json:"size"`
}

// Parked lists this stream's parked messages, oldest first.
func (s *Stream) Parked(ctx context.Context) ([]Parked, error) {
	var out []Parked
	err := s.eachParked(ctx, func(m *jetstream.RawStreamMsg) error {
		out = append(out, parkedOf(m))
		return nil
	})
	return out, err
}

// ParkedCount is how many of this stream's messages are parked.
func (s *Stream) ParkedCount(ctx context.Context) (uint64, error) {
	st, err := s.js.Stream(ctx, s.cfg.DeadStream)
	if err != nil {
		return 0, fmt.Errorf("open dead-letter stream: %w", err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(s.cfg.DeadSubject+".>"))
	if err != nil {
		return 0, fmt.Errorf("read dead-letter stream: %w", err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n, nil
}

func parkedOf(m *jetstream.RawStreamMsg) Parked {
	p := Parked{Seq: m.Sequence, Parked: m.Time, Size: len(m.Data)}
	if m.Header != nil {
		p.MsgID = m.Header.Get(HeaderOriginMsgID)
		p.Reason = m.Header.Get(HeaderReason)
		p.Attempts, _ = strconv.Atoi(m.Header.Get(HeaderAttempts))
		p.Enqueued, _ = time.Parse(time.RFC3339Nano, m.Header.Get(HeaderEnqueued))
	}
	return p
}

// eachParked calls fn on each parked message of this stream, oldest first.
func (s *Stream) eachParked(ctx context.Context, fn func(*jetstream.RawStreamMsg) error) error {
	st, err := s.js.Stream(ctx, s.cfg.DeadStream)
	if err != nil {
		return fmt.Errorf("open dead-letter stream: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("read dead-letter stream: %w", err)
	}
	last := info.State.LastSeq
	for seq := uint64(1); seq <= last; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(s.cfg.DeadSubject+".>"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read parked message from %d: %w", seq, err)
		}
		if err := fn(m); err != nil {
			return err
		}
		seq = m.Sequence + 1
	}
	return nil
}

// Replay stores parked messages again on their stream, under fresh message
// IDs, and removes them from the dead-letter stream: all of this stream's
// when msgID is empty, else the one parked under msgID. It returns how many
// were replayed.
func (s *Stream) Replay(ctx context.Context, msgID string) (int, error) {
	st, err := s.js.Stream(ctx, s.cfg.DeadStream)
	if err != nil {
		return 0, fmt.Errorf("open dead-letter stream: %w", err)
	}
	var n int
	err = s.eachParked(ctx, func(m *jetstream.RawStreamMsg) error {
		p := parkedOf(m)
		if msgID != "" && p.MsgID != msgID {
			return nil
		}
		hdr := nats.Header{}
		for k, v := range m.Header {
			switch k {
			case HeaderOriginStream, HeaderOriginMsgID, HeaderReason, HeaderAttempts, HeaderEnqueued, HeaderPriorAttempts, HeaderDue:
				continue
			}
			hdr[k] = v
		}
		if _, err := s.publish(ctx, replayID(p.MsgID, m.Sequence), m.Data, hdr); err != nil {
			return fmt.Errorf("replay parked message %d (%s): %w", m.Sequence, p.MsgID, err)
		}
		if err := st.DeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("remove replayed message %d (%s) from the dead-letter stream: %w", m.Sequence, p.MsgID, err)
		}
		n++
		s.log.Info("parked message replayed", zap.String("msg_id", p.MsgID), zap.Uint64("parked_seq", m.Sequence))
		return nil
	})
	return n, err
}
