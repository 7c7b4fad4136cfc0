package store

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// RunRetention removes the finished tasks whose retention has passed
// (SetTaskRetention) at once and then every interval, until ctx ends. Of
// the bot's replicas, the first to take the turn sweeps (owner names this
// one) and the others skip the interval; every replica asks each
// DefaultSweepCheck (or each interval, if shorter), so that a sweep whose
// holder died is taken over once its lease lapses. With no retention or no
// interval it returns at once. First, once per store, the tasks finished
// before tasks had a retention are given theirs.
func (s *Store) RunRetention(ctx context.Context, every time.Duration, owner string, log *zap.Logger) {
	if s.retention <= 0 || every <= 0 {
		return
	}
	if n, err := s.IndexTaskExpiry(ctx); err != nil {
		if ctx.Err() == nil {
			log.Warn("index the expiry of stored tasks: those finished before this version are kept until a start that does it", zap.Error(err))
		}
	} else if n > 0 {
		log.Info("gave the finished tasks stored before a retention theirs", zap.Int("tasks", n), zap.Duration("retention", s.retention))
	}
	check := s.sweepCheck
	if check <= 0 {
		check = DefaultSweepCheck
	}
	tick := time.NewTicker(min(every, check))
	defer tick.Stop()
	for {
		s.sweepExpired(ctx, owner, every, log)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sweepExpired sweeps once if this process takes the interval's turn.
func (s *Store) sweepExpired(ctx context.Context, owner string, every time.Duration, log *zap.Logger) {
	ok, err := s.TakeSweepTurn(ctx, owner, every)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("take the retention sweep's turn; trying again next interval", zap.Error(err))
		}
		return
	}
	if !ok {
		return // swept in this interval, or another replica is sweeping
	}
	began := time.Now()
	work, stop := s.holdSweep(ctx, owner)
	n, err := s.SweepExpiredTasks(work)
	stop()
	if eerr := s.endSweep(context.WithoutCancel(ctx), owner, every, err == nil); eerr != nil && ctx.Err() == nil {
		log.Warn("end the retention sweep: its lock lapses by itself", zap.Error(eerr))
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("sweep expired tasks; the rest waits for the next try", zap.Int("removed", n), zap.Error(err))
		return
	}
	if n > 0 {
		log.Info("removed expired tasks", zap.Int("tasks", n), zap.Duration("took", time.Since(began)))
	}
}
