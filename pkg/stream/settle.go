package stream

import (
	"context"
	"errors"
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
	SettledRetry                      // failed: delivered again after RetryDelay
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
	switch {
	case err == nil:
		return SettledAck, d.Ack(ctx)
	case errors.Is(err, ErrPermanent):
		return SettledPark, d.Park(ctx, err.Error())
	case work.Err() != nil:
		return SettledHandBack, d.Nak(ctx, 0)
	}
	parked, serr := d.Retry(ctx, err)
	if parked {
		return SettledPark, serr
	}
	return SettledRetry, serr
}
