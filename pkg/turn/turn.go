// Package turn runs a periodic piece of the bot's work in one replica at a
// time: each interval, the replica that takes the interval's turn in the
// store does it, the others wait for the next one.
package turn

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Turns gives one of the bot's replicas the turn to do a piece of work for
// an interval (store.Store.TakeTurn).
type Turns interface {
	TakeTurn(ctx context.Context, work, owner string, interval time.Duration) (bool, error)
}

// Every calls pass every interval until ctx ends, the first at once. With
// turns set, a pass runs only when owner takes the interval's turn of work;
// with none it always runs. A turn that cannot be taken is logged and the
// next interval tries again; pass logs what it did itself.
func Every(ctx context.Context, every time.Duration, turns Turns, work, owner string, log *zap.Logger, pass func(ctx context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if mine(ctx, every, turns, work, owner, log) {
			pass(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// mine reports whether this replica takes the interval's turn.
func mine(ctx context.Context, every time.Duration, turns Turns, work, owner string, log *zap.Logger) bool {
	if turns == nil {
		return true
	}
	ok, err := turns.TakeTurn(ctx, work, owner, every)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Warn("take the turn; trying again next interval", zap.String("work", work), zap.Error(err))
		}
		return false
	case !ok:
		log.Debug("the turn is another replica's this interval", zap.String("work", work))
	}
	return ok
}
