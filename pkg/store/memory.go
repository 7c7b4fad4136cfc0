package store

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// ErrMemoryFull is wrapped by the errors of the writes Redis refused
// because it reached its memory cap: maxmemory with maxmemory-policy
// noeviction refuses writes rather than evict state redfix relies on.
// They fail until memory is freed or the cap raised (docs/operations.md,
// "Redis is full").
var ErrMemoryFull = errors.New("the Redis memory cap (maxmemory) is reached: Redis refuses writes until memory is freed or the cap is raised")

// MemoryFullErrors counts the commands and transactions Redis refused
// because its memory cap was reached, since the store was made.
func (s *Store) MemoryFullErrors() int64 { return s.memoryFull.Load() }

// memoryHook makes the errors of the writes Redis refused for its memory
// cap wrap ErrMemoryFull, and counts them. A command or a script says OOM
// itself; a transaction (MULTI … EXEC) says EXECABORT, and the command
// Redis refused to queue keeps its OOM.
type memoryHook struct {
	s *Store
}

func (h memoryHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h memoryHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil || errors.Is(err, ErrMemoryFull) || !redis.IsOOMError(err) {
			return err
		}
		h.s.memoryFull.Add(1)
		err = fmt.Errorf("%w: %w", ErrMemoryFull, err)
		cmd.SetErr(err)
		return err
	}
}

func (h memoryHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err == nil || errors.Is(err, ErrMemoryFull) {
			return err
		}
		full := redis.IsOOMError(err)
		for _, c := range cmds {
			full = full || redis.IsOOMError(c.Err())
		}
		if !full {
			return err
		}
		h.s.memoryFull.Add(1)
		for _, c := range cmds {
			if cerr := c.Err(); cerr != nil && !errors.Is(cerr, ErrMemoryFull) {
				c.SetErr(fmt.Errorf("%w: %w", ErrMemoryFull, cerr))
			}
		}
		return fmt.Errorf("%w: %w", ErrMemoryFull, err)
	}
}

// MemoryFullMetric is redfix_store_memory_full_errors_total, read from
// MemoryFullErrors at each scrape.
func (s *Store) MemoryFullMetric() prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "redfix_store_memory_full_errors_total",
		Help: "Redis commands and transactions refused because Redis reached its memory cap (maxmemory, with maxmemory-policy noeviction): redfix's writes fail until memory is freed or the cap raised.",
	}, func() float64 { return float64(s.MemoryFullErrors()) })
}
