// Package store keeps redfix's state in Redis: tasks with their status
// index and counters, failure groups, flakiness history, the idempotency
// keys that keep a failure group to one pull request, and outcome counters.
//
// Every key starts with the store's prefix. Against Redis Cluster, put a
// hash tag in the prefix ("{redfix}") so that the keys that transactions and
// scripts touch together share a slot.
package store

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

// DefaultPrefix is used when New is given an empty prefix.
const DefaultPrefix = "redfix"

// DefaultListLimit is how many tasks ListTasks returns for a limit <= 0.
const DefaultListLimit = 100

// maxTxRetries bounds the optimistic transactions retried on contention.
const maxTxRetries = 64

// Store reads and writes redfix's state.
type Store struct {
	rdb       redis.UniversalClient
	prefix    string
	ttls      ClaimTTLs
	retention time.Duration    // of finished tasks; 0: forever
	now       func() time.Time // when a finished task's retention starts, and the sweep's clock
	// sweepLease and sweepCheck are the retention sweep's lock lease and
	// how often it is asked for (DefaultSweepLease, DefaultSweepCheck when 0).
	sweepLease, sweepCheck time.Duration

	deleteOwned  *redis.Script
	claimPublish *redis.Script
	firstTime    *redis.Script

	redactor *redact.Redactor
	// durability is what the fencing writes wait for (SetDurability).
	durability Durability

	memoryFull atomic.Int64 // writes refused for Redis's memory cap (memoryHook)
}

// Redact makes every task stored from now on go through r first: its
// failure messages and outputs, its reason, every string in it.
func (s *Store) Redact(r *redact.Redactor) { s.redactor = r }

// New makes a store on rdb whose keys start with prefix (DefaultPrefix when
// empty). The errors of writes Redis refuses for its memory cap wrap
// ErrMemoryFull from then on (a hook on rdb).
func New(rdb redis.UniversalClient, prefix string) *Store {
	prefix = strings.TrimSuffix(prefix, ":")
	if prefix == "" {
		prefix = DefaultPrefix
	}
	s := &Store{
		rdb:       rdb,
		prefix:    prefix,
		ttls:      DefaultClaimTTLs,
		retention: DefaultTaskRetention,
		now:       time.Now,
		// Deletes KEYS[1] only if it still holds ARGV[1]: releases a claim
		// without taking one that another owner has made since.
		deleteOwned: redis.NewScript(releaseOwnedSrc),
		// 1 when owner holds the publish lock (taken now or renewed), 0 when
		// the group is already published or another owner holds the lock.
		// 1 when KEYS[1] was set now (with ARGV[1], for ARGV[2] ms), 0
		// when it or any of KEYS[2..] exists.
		firstTime: redis.NewScript(`
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`),
		claimPublish: redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`),
	}
	rdb.AddHook(memoryHook{s})
	return s
}

func (s *Store) key(parts ...string) string {
	return s.prefix + ":" + strings.Join(parts, ":")
}

func (s *Store) taskKey(id string) string           { return s.key("task", id) }
func (s *Store) tasksKey() string                   { return s.key("tasks") }
func (s *Store) statusKey(st task.Status) string    { return s.key("status", string(st)) }
func (s *Store) statusCountsKey() string            { return s.key("status_counts") }
func (s *Store) repoTasksKey(repo string) string    { return s.key("repo_tasks", repo) }
func (s *Store) groupKey(fingerprint string) string { return s.key("group", fingerprint) }
func (s *Store) occurrencesKey(fp string) string    { return s.key("occurrences", fp) }
func (s *Store) historyKey(testID string) string    { return s.key("history", testID) }
func (s *Store) publishLockKey(fp string) string    { return s.key("publish_lock", fp) }
func (s *Store) publishedKey(fp string) string      { return s.key("published", fp) }
func (s *Store) outcomesKey() string                { return s.key("outcomes") }

// Ready reports whether Redis answers, for readiness probes.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}
