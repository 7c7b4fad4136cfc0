package keep

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/turn"
)

// keepTurn names the pass's turn.
const keepTurn = "keep_pull_requests"

// Run makes a pass every interval until ctx ends, the first at once; with
// Turns set, only in the replica that takes the interval's turn. A failed
// pass is logged and the next one tries again.
func (k *Keeper) Run(ctx context.Context, every time.Duration) {
	turn.Every(ctx, every, k.Turns, keepTurn, k.Owner, k.Log, k.logPass)
}

// logPass makes one pass and logs what it did.
func (k *Keeper) logPass(ctx context.Context) {
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
