package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// maxDeliverAdvisory is what the server says when a message used up its
// deliveries without being settled (its consumer died on the last one).
type maxDeliverAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// WatchExhausted parks the messages that the server stops delivering
// because they used up MaxDeliver without being settled — a consumer
// killed on the last attempt — so that they do not sit on the stream for
// good. It runs until ctx ends; Consume runs it.
func (s *Stream) WatchExhausted(ctx context.Context) error {
	if s.cfg.MaxDeliver < 1 {
		<-ctx.Done()
		return nil
	}
	subject := fmt.Sprintf("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", s.cfg.Stream, s.cfg.Consumer)
	ch := make(chan *nats.Msg, 64)
	sub, err := s.js.Conn().ChanSubscribe(subject, ch)
	if err != nil {
		return fmt.Errorf("watch exhausted messages of %s/%s: %w", s.cfg.Stream, s.cfg.Consumer, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-ch:
			var adv maxDeliverAdvisory
			if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq == 0 {
				continue
			}
			if err := s.parkExhausted(ctx, adv); err != nil && ctx.Err() == nil {
				s.log.Error("park a message that used up its deliveries", zap.Uint64("seq", adv.StreamSeq), zap.Error(err))
			}
		}
	}
}

func (s *Stream) parkExhausted(ctx context.Context, adv maxDeliverAdvisory) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := s.js.Stream(ctx, s.cfg.Stream)
	if err != nil {
		return err
	}
	raw, err := st.GetMsg(ctx, adv.StreamSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // settled or parked meanwhile
	}
	if err != nil {
		return err
	}
	id := ""
	if raw.Header != nil {
		id = raw.Header.Get(jetstream.MsgIDHeader)
		if origin := raw.Header.Get(HeaderOriginMsgID); origin != "" {
			id = origin // stored again after waiting aside
		}
	}
	if id == "" {
		id = "seq-" + strconv.FormatUint(raw.Sequence, 10)
	}
	reason := fmt.Sprintf("used up its %d deliveries without being settled (its consumer died on each)", adv.Deliveries)
	m := nats.NewMsg(s.deadSubject(id))
	m.Data = raw.Data
	for k, v := range raw.Header {
		if k != jetstream.MsgIDHeader {
			m.Header[k] = v
		}
	}
	m.Header.Set(HeaderOriginStream, s.cfg.Stream)
	m.Header.Set(HeaderOriginMsgID, id)
	m.Header.Set(HeaderReason, reason)
	m.Header.Set(HeaderAttempts, strconv.FormatUint(adv.Deliveries, 10))
	m.Header.Set(HeaderEnqueued, raw.Time.UTC().Format(time.RFC3339Nano))
	parkID := fmt.Sprintf("park-%s-%d", s.cfg.Stream, raw.Sequence)
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithMsgID(parkID), jetstream.WithExpectStream(s.cfg.DeadStream)); err != nil {
		return err
	}
	if err := st.DeleteMsg(ctx, raw.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return err
	}
	s.log.Error("message parked on the dead-letter stream after its last delivery; replay it with `bot replay`",
		zap.String("msg_id", id), zap.Uint64("seq", raw.Sequence), zap.String("reason", reason))
	return nil
}
