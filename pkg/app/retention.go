package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
)

// RunRetention removes the finished tasks whose retention has passed
// (redis.task_retention) at once and then every
// redis.retention_sweep_interval, until ctx ends. Of the bot's replicas,
// the first to take the interval's turn sweeps; the others skip it. With
// no retention it returns at once. First, once per store, the tasks
// finished before tasks had a retention are given theirs.
func (s *System) RunRetention(ctx context.Context, cfg config.Config) {
	every := cfg.Redis.RetentionSweepInterval
	if cfg.Redis.TaskRetention <= 0 || every <= 0 {
		return
	}
	log := s.log.Named("retention")
	if n, err := s.Store.IndexTaskExpiry(ctx); err != nil {
		if ctx.Err() == nil {
			log.Warn("index the expiry of stored tasks: those finished before this version are kept until a start that does it", zap.Error(err))
		}
	} else if n > 0 {
		log.Info("gave the finished tasks stored before a retention theirs", zap.Int("tasks", n), zap.Duration("retention", cfg.Redis.TaskRetention))
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s:%d", host, os.Getpid())
	tick := time.NewTicker(every)
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
func (s *System) sweepExpired(ctx context.Context, owner string, every time.Duration, log *zap.Logger) {
	ok, err := s.Store.TakeSweepTurn(ctx, owner, every)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("take the retention sweep's turn; trying again next interval", zap.Error(err))
		}
		return
	}
	if !ok {
		return // another replica sweeps this interval
	}
	began := time.Now()
	n, err := s.Store.SweepExpiredTasks(ctx)
	if err != nil && ctx.Err() == nil {
		log.Warn("sweep expired tasks; the rest waits for the next interval", zap.Int("removed", n), zap.Error(err))
		return
	}
	if n > 0 {
		log.Info("removed expired tasks", zap.Int("tasks", n), zap.Duration("took", time.Since(began)))
	}
}
