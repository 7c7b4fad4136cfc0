package stale

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Turns gives one of the bot's replicas the turn to do a periodic piece of
// work for an interval (store.Store.TakeTurn).
type Turns interface {
	TakeTurn(ctx context.Context, work, owner string, interval time.Duration) (bool, error)
}

// keepTurn names the pass's turn.
const keepTurn = "keep_pull_requests"

// Run makes a pass every interval until ctx ends, the first at once; with
// Turns set, only in the replica that takes the interval's turn. A failed
// pass is logged and the next one tries again.
func (k *Keeper) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		k.turn(ctx, every)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// turn makes one pass if this replica takes the interval's turn.
func (k *Keeper) turn(ctx context.Context, every time.Duration) {
	if k.Turns != nil {
		mine, err := k.Turns.TakeTurn(ctx, keepTurn, k.Owner, every)
		if err != nil {
			if ctx.Err() == nil {
				k.Log.Warn("take the turn of the pull requests' pass; trying again next interval", zap.Error(err))
			}
			return
		}
		if !mine {
			k.Log.Debug("the pull requests' pass is another replica's this interval")
			return
		}
	}
	began := time.Now()
	c, err := k.Pass(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		k.Log.Warn("pull requests' pass failed", zap.Error(err))
	default:
		k.Log.Info("pull requests' pass", zap.Int("open", c.Open), zap.Int("closed_fixed", c.Fixed),
			zap.Int("closed_conflicts", c.Conflicts), zap.Int("errors", c.Errors), zap.Duration("took", time.Since(began)))
	}
}
