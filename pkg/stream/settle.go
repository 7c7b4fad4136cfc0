package stream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrPermanent classes a failure that no retry can mend (a malformed
// message, a repository that is not there, a task that cannot be worked
// on): Settle parks its message at once, with the error as the reason.
var ErrPermanent = errors.New("permanent")

// permanent is an error classed with ErrPermanent, saying only its own
// text.
type permanent struct{ err error }

func (p permanent) Error() string        { return p.err.Error() }
func (p permanent) Unwrap() error        { return p.err }
func (p permanent) Is(target error) bool { return target == ErrPermanent }

// Permanent classes err as permanent (errors.Is(err, ErrPermanent)),
// keeping its text and what it wraps.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// Settlement is what Settle did with a delivery.
type Settlement int

// The settlements.
const (
	SettledAck      Settlement = iota // handled: removed from the stream
	SettledHandBack                   // the consumer is stopping: delivered again at once, to another
	SettledRetry                      // failed: delivered again after RetryDelay (waiting aside where the stream says so)
	SettledPark                       // failed for good, or on its last attempt: on the dead-letter stream
)

func (s Settlement) String() string {
	switch s {
	case SettledAck:
		return "acked"
	case SettledHandBack:
		return "handed back"
	case SettledRetry:
		return "retried"
	case SettledPark:
		return "parked"
	}
	return "unknown"
}

// settleTimeoutOf bounds the wait for the server to confirm a settlement.
const settleTimeoutOf = 10 * time.Second

// Settle settles the delivery by what handling it returned, the one way
// every consumer of a stream does: nil acks it; a handling cut short by
// the consumer stopping (work done) hands it back at once; an error classed
// ErrPermanent parks it, with the error as the reason; any other error
// retries it after RetryDelay (doubling with each attempt), or parks it on
// its last attempt. It settles even when work is done (on a context of its
// own), so that a handled message is never handled again for a late ack.
// The error is the server's, when the settlement itself failed: the message
// then comes back after the ack wait.
func (d *Delivery) Settle(work context.Context, err error) (Settlement, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(work), settleTimeoutOf)
	defer cancel()
	how := d.Settlement(work, err)
	switch how {
	case SettledAck:
		return how, d.Ack(ctx)
	case SettledHandBack:
		return how, d.Nak(ctx, 0)
	case SettledRetry:
		return how, d.retry(ctx, d.RetryDelay())
	}
	if errors.Is(err, ErrPermanent) {
		return how, d.Park(ctx, err.Error())
	}
	return how, d.Park(ctx, fmt.Sprintf("gave up after %d attempts over %s: %v", d.Attempt, time.Since(d.Enqueued).Round(time.Second), err))
}

// Settlement is what Settle will do with the delivery for err, without
// doing it: for a handler that records the outcome (a task's status)
// before it settles.
func (d *Delivery) Settlement(work context.Context, err error) Settlement {
	switch {
	case err == nil:
		return SettledAck
	case errors.Is(err, ErrPermanent):
		return SettledPark
	case work.Err() != nil:
		return SettledHandBack
	case d.LastAttempt():
		return SettledPark
	}
	return SettledRetry
}
