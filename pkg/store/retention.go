package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// DefaultTaskRetention is how long a finished task is kept unless
// SetTaskRetention says otherwise.
const DefaultTaskRetention = 90 * 24 * time.Hour

// sweepBatch is how many expired tasks one sweep transaction removes.
const sweepBatch = 500

func (s *Store) taskExpiryKey() string         { return s.key("task_expiry") }
func (s *Store) taskReposKey() string          { return s.key("task_repos") }
func (s *Store) retentionLockKey() string      { return s.key("retention_lock") }
func (s *Store) retentionSweptKey() string     { return s.key("retention_swept") }
func (s *Store) retentionMigrationKey() string { return s.key("migrations", "task_expiry") }

// SetTaskRetention sets how long a task is kept once it reached a final
// status (task.Status.Final): its key expires then, and SweepExpiredTasks
// removes it from the indexes. Queued and running tasks are never expired.
// 0 keeps finished tasks forever.
func (s *Store) SetTaskRetention(d time.Duration) { s.retention = max(0, d) }

// TaskRetention is the retention in use (0: forever).
func (s *Store) TaskRetention() time.Duration { return s.retention }

// retainTask queues, in p, the life of task id after a save that left it
// in status st: a final task expires after the retention and is entered in
// the expiry index under the time it is due; any other lives on.
func (s *Store) retainTask(ctx context.Context, p redis.Pipeliner, key, id string, st task.Status, enc []byte) {
	if st.Final() && s.retention > 0 {
		p.Set(ctx, key, enc, s.retention)
		p.ZAdd(ctx, s.taskExpiryKey(), redis.Z{Score: float64(s.now().Add(s.retention).UnixMilli()), Member: id})
		return
	}
	p.Set(ctx, key, enc, 0)
	p.ZRem(ctx, s.taskExpiryKey(), id)
}

// TakeSweepTurn makes owner the one process that sweeps expired tasks now:
// it reports false when a sweep ended within the last interval
// (retention_swept), or another process is sweeping (retention_lock). The
// lock is a lease of sweepLease that its holder renews while it sweeps
// (holdSweep) and gives back when done (endSweep), so that it expires with
// a holder that died: the next replica to ask sweeps then, not an interval
// later. The sweep is idempotent.
func (s *Store) TakeSweepTurn(ctx context.Context, owner string, interval time.Duration) (bool, error) {
	if interval < time.Millisecond {
		return false, fmt.Errorf("take the retention sweep's turn: interval %s: must be at least 1ms", interval)
	}
	n, err := s.firstTime.Run(ctx, s.rdb, []string{s.retentionLockKey(), s.retentionSweptKey()}, owner, s.lease().Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("take the retention sweep's turn for %s: %w", owner, err)
	}
	return n == 1, nil
}

// Retention sweep defaults: the lease of the sweep's lock, renewed by its
// holder at a third of it; and how often each process asks whether a
// sweep is due (at most the interval).
const (
	DefaultSweepLease = 30 * time.Second
	DefaultSweepCheck = time.Minute
)

func (s *Store) lease() time.Duration {
	if s.sweepLease > 0 {
		return s.sweepLease
	}
	return DefaultSweepLease
}

// holdSweep renews owner's lease on the sweep until stop is called;
// work ends if the lease is lost (another process took the lock after a
// pause longer than the lease).
func (s *Store) holdSweep(ctx context.Context, owner string) (work context.Context, stop func()) {
	work, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(s.lease() / 3)
		defer tick.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-tick.C:
			}
			n, err := s.rdb.Eval(work, expireOwnedSrc, []string{s.retentionLockKey()}, owner, s.lease().Milliseconds()).Int64()
			if err == nil && n == 0 {
				cancel()
				return
			}
		}
	}()
	return work, func() { cancel(); <-done }
}

// endSweep gives owner's lock back; a sweep that finished (swept) also
// marks the interval as swept, so that no replica sweeps again in it.
func (s *Store) endSweep(ctx context.Context, owner string, interval time.Duration, swept bool) error {
	if swept {
		if err := s.rdb.Set(ctx, s.retentionSweptKey(), owner, interval).Err(); err != nil {
			return fmt.Errorf("mark the retention sweep done: %w", err)
		}
	}
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.retentionLockKey()}, owner).Err(); err != nil {
		return fmt.Errorf("give the retention sweep's lock back: %w", err)
	}
	return nil
}

// SweepExpiredTasks removes the tasks whose retention has passed: the task
// (if its key has not expired yet), its entries in the task index, the
// status sets and its repository's index, and its per-task keys. It
// reports how many it removed. A task saved again meanwhile (moved back to
// an active status, or finished again later) is left alone. Running it
// twice, or from two processes at once, is harmless.
func (s *Store) SweepExpiredTasks(ctx context.Context) (int, error) {
	repos, err := s.rdb.SMembers(ctx, s.taskReposKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("sweep expired tasks: list repositories: %w", err)
	}
	removed := 0
	for {
		now := strconv.FormatInt(s.now().UnixMilli(), 10)
		ids, err := s.rdb.ZRangeByScore(ctx, s.taskExpiryKey(), &redis.ZRangeBy{Min: "-inf", Max: now, Count: sweepBatch}).Result()
		if err != nil {
			return removed, fmt.Errorf("sweep expired tasks: %w", err)
		}
		if len(ids) == 0 {
			return removed, nil
		}
		n, err := s.sweepBatch(ctx, ids, now, repos)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("sweep expired tasks: %w", err)
		}
		if n == 0 && len(ids) < sweepBatch {
			// Each was saved again since it was read: nothing left due.
			return removed, nil
		}
	}
}

// sweepBatch removes the tasks of ids that are still due at now (unix
// milliseconds) in one transaction, watching their keys so that a task
// saved meanwhile is kept. repos are the repositories with a task index.
func (s *Store) sweepBatch(ctx context.Context, ids []string, now string, repos []string) (int, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.taskKey(id)
	}
	due, _ := strconv.ParseFloat(now, 64)
	removed := 0
	txf := func(tx *redis.Tx) error {
		removed = 0
		scores, err := tx.ZMScore(ctx, s.taskExpiryKey(), ids...).Result()
		if err != nil {
			return fmt.Errorf("read the expiries: %w", err)
		}
		var gone []string
		for i, id := range ids {
			// 0: no longer in the index (saved as active, or swept).
			if scores[i] != 0 && scores[i] <= due {
				gone = append(gone, id)
			}
		}
		if len(gone) == 0 {
			return nil
		}
		members := make([]any, len(gone))
		var del []string
		for i, id := range gone {
			members[i] = id
			del = append(del, s.taskKey(id), s.reportedKey(id))
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, del...)
			p.ZRem(ctx, s.tasksKey(), members...)
			p.ZRem(ctx, s.taskExpiryKey(), members...)
			// The task's content may have expired already: its status and
			// repository are not known, so every final status's set and
			// every repository's index drop it.
			for _, st := range task.Statuses {
				if st.Final() {
					p.SRem(ctx, s.statusKey(st), members...)
				}
			}
			for _, repo := range repos {
				p.ZRem(ctx, s.repoTasksKey(repo), members...)
			}
			return nil
		})
		if err == nil {
			removed = len(gone)
		}
		return err
	}
	for range maxTxRetries {
		err := s.rdb.Watch(ctx, txf, keys...)
		if errors.Is(err, redis.TxFailedErr) {
			continue // a task was saved (or expired) meanwhile: read again
		}
		return removed, err
	}
	return 0, fmt.Errorf("gave up after %d conflicting concurrent updates", maxTxRetries)
}

// IndexTaskExpiry gives the tasks stored before tasks had a retention
// theirs, once per store (a marker key records it done): each finished
// task is due its retention after its last update (at once when that is
// past), and every task's repository is listed for the sweep. It reports
// how many finished tasks it indexed; with no retention it does nothing.
// Running it twice, or from two processes at once, is harmless.
func (s *Store) IndexTaskExpiry(ctx context.Context) (int, error) {
	if s.retention <= 0 {
		return 0, nil
	}
	n, err := s.migrateTasks(ctx, s.retentionMigrationKey(), func(p redis.Pipeliner, t task.Task) bool {
		if t.Repo != "" {
			p.SAdd(ctx, s.taskReposKey(), t.Repo)
		}
		if !t.Status.Final() {
			return false
		}
		// Only where the task has no expiry yet: one saved by this
		// version since keeps its own. The sweep deletes the task when it
		// is due.
		at := t.UpdatedAt.Add(s.retention)
		p.ZAddNX(ctx, s.taskExpiryKey(), redis.Z{Score: float64(at.UnixMilli()), Member: t.ID})
		return true
	})
	if err != nil {
		return n, fmt.Errorf("index the expiry of stored tasks: %w", err)
	}
	return n, nil
}
