package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is wrapped by the errors of writes that Redis's
// primary made but fewer replicas than the store's Durability asks for
// acknowledged in time: a failover now could lose them, so the step that
// needed them stops, as if the write had failed (it is retried later).
var ErrNotReplicated = errors.New("write not acknowledged by enough replicas")

// Durability is how many replicas must hold the writes that keep a failure
// group to one pull request (group claims, publish claims, the published
// mark) before the store reports them done. Replicas 0 waits for none.
type Durability struct {
	Replicas int
	// Timeout bounds the wait (WAIT's timeout).
	Timeout time.Duration
}

// SetDurability makes the fencing writes wait for d's replicas (WAIT after
// the write, on the same connection) and fail with ErrNotReplicated when
// fewer acknowledge within d.Timeout.
func (s *Store) SetDurability(d Durability) { s.durability = d }

// evalFenced runs script as one write that must survive a failover: with a
// Durability, the script and WAIT go down one connection in one pipeline
// (WAIT counts the replicas that have this connection's writes).
func (s *Store) evalFenced(ctx context.Context, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	d := s.durability
	if d.Replicas <= 0 {
		cmd := script.Run(ctx, s.rdb, keys, args...)
		return cmd, cmd.Err()
	}
	var cmd *redis.Cmd
	var wait *redis.Cmd
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = script.Eval(ctx, p, keys, args...)
		// The pipeline's read timeout (3 s by default) must outlast it.
		wait = p.Do(ctx, "wait", d.Replicas, d.Timeout.Milliseconds())
		return nil
	})
	if err := cmd.Err(); err != nil {
		return cmd, err
	}
	n, err := wait.Int64()
	if err != nil {
		return cmd, fmt.Errorf("wait for %d replicas: %w", d.Replicas, err)
	}
	if n < int64(d.Replicas) {
		return cmd, fmt.Errorf("%w: %d of %d within %s", ErrNotReplicated, n, d.Replicas, d.Timeout)
	}
	return cmd, nil
}

// markPublishedScript records the group's pull request (KEYS[2] = ARGV[1])
// and releases the publish lock (KEYS[1]), as one write.
var markPublishedScript = redis.NewScript(`
redis.call('SET', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`)
