package app

import (
	"context"
	"fmt"
	"os"

	"github.com/redfix/redfix/pkg/config"
)

// RunRetention runs the store's retention sweep (store.RunRetention) every
// redis.retention_sweep_interval until ctx ends, as this process
// (host:pid) when it takes the interval's turn.
func (s *System) RunRetention(ctx context.Context, cfg config.Config) {
	s.Store.RunRetention(ctx, cfg.Redis.RetentionSweepInterval, processOwner(), s.log.Named("retention"))
}

// processOwner names this process (host:pid) as the holder of a turn.
func processOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}
