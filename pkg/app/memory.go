package app

import (
	"os"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/memlimit"
)

// limitMemory gives a worker command's process its soft memory limit
// (worker.memory_limit_mb; the operator's GOMEMLIMIT, which the runtime
// read at start, wins) and logs it. The function it returns puts back the
// limit before, for a command run inside a test's process.
func limitMemory(cfg config.Config, log *zap.Logger) func() {
	l, restore := memlimit.Set(cfg.Worker.MemoryLimitMB, os.Getenv)
	log.Info("memory limit", zap.Stringer("limit", l))
	return restore
}
