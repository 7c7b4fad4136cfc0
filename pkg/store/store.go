// Package store keeps redfix's state in Redis: tasks with their status
// index and counters, failure groups, flakiness history, the idempotency
// keys that keep a failure group to one pull request, and outcome counters.
//
// Every key starts with the store's prefix. Against Redis Cluster, put a
// hash tag in the prefix ("{redfix}") so that the keys that transactions and
// scripts touch together share a slot.
package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

	deleteOwned  *redis.Script
	claimPublish *redis.Script
	firstTime    *redis.Script

	redactor *redact.Redactor

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

// SaveTask stores t, creating or replacing it, and keeps the created-time
// and status indexes and the status counters in step. A zero CreatedAt or
// UpdatedAt is stored as now. Failures are never lost: those the stored
// task has and t lacks (merged into it by AddFailures after t was read, a
// worker's copy that predates them) are kept, and so are the spend recorded
// by AddTaskSpend and the rounds of an earlier attempt when t carries none.
func (s *Store) SaveTask(ctx context.Context, t task.Task) error {
	if t.ID == "" {
		return errors.New("save task: task has no id")
	}
	now := time.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = now
	}
	err := s.updateTask(ctx, t.ID, func(cur *task.Task) (task.Task, error) {
		if cur != nil {
			t.Failures = keepMerged(t.Failures, cur.Failures)
			// The spend is added to (AddTaskSpend), never replaced by
			// a save that carries none.
			if t.Spend == nil {
				t.Spend = cur.Spend
			}
			// The rounds are an attempt's evidence: kept until a later
			// attempt brings its own.
			if t.Rounds == nil {
				t.Rounds = cur.Rounds
			}
		}
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("save task %s: %w", t.ID, err)
	}
	return nil
}

// AddTaskSpend adds sp to what the task's model calls have spent, over its
// attempts.
func (s *Store) AddTaskSpend(ctx context.Context, id string, sp task.Spend) error {
	err := s.updateTask(ctx, id, func(cur *task.Task) (task.Task, error) {
		if cur == nil {
			return task.Task{}, task.ErrNotFound
		}
		t := *cur
		sum := sp
		if t.Spend != nil {
			sum = t.Spend.Add(sp)
		}
		t.Spend = &sum
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("add the spend of task %s: %w", id, err)
	}
	return nil
}

// GetTask reads a task; task.ErrNotFound when there is none with that id.
func (s *Store) GetTask(ctx context.Context, id string) (task.Task, error) {
	data, err := s.rdb.Get(ctx, s.taskKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, task.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	var t task.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return task.Task{}, fmt.Errorf("get task %s: decode: %w", id, err)
	}
	return t, nil
}

// SetStatus moves a task to status st with reason, and sets its UpdatedAt;
// task.ErrNotFound when there is no such task.
func (s *Store) SetStatus(ctx context.Context, id string, st task.Status, reason string) error {
	if st == "" {
		return fmt.Errorf("set status of task %s: empty status", id)
	}
	err := s.updateTask(ctx, id, func(cur *task.Task) (task.Task, error) {
		if cur == nil {
			return task.Task{}, task.ErrNotFound
		}
		t := *cur
		t.Status = st
		t.Reason = reason
		t.UpdatedAt = time.Now().UTC()
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("set status of task %s to %s: %w", id, st, err)
	}
	return nil
}

// updateTask writes change(current task, nil when absent) in a transaction
// that watches the task's key, so that two writers never leave the status
// index and counters disagreeing with the task. It retries on contention.
func (s *Store) updateTask(ctx context.Context, id string, change func(cur *task.Task) (task.Task, error)) error {
	key := s.taskKey(id)
	txf := func(tx *redis.Tx) error {
		var cur *task.Task
		data, err := tx.Get(ctx, key).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return fmt.Errorf("read current: %w", err)
		default:
			cur = new(task.Task)
			if err := json.Unmarshal(data, cur); err != nil {
				return fmt.Errorf("decode current: %w", err)
			}
		}
		next, err := change(cur)
		if err != nil {
			return err
		}
		enc, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		enc = s.redactor.JSON(enc)
		var old task.Status
		if cur != nil {
			old = cur.Status
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			s.retainTask(ctx, p, key, id, next.Status, enc)
			p.ZAdd(ctx, s.tasksKey(), redis.Z{Score: float64(next.CreatedAt.UnixMicro()), Member: id})
			if next.Repo != "" {
				p.ZAdd(ctx, s.repoTasksKey(next.Repo), redis.Z{Score: float64(next.CreatedAt.UnixMicro()), Member: id})
				// The sweep removes expired tasks from every repository's
				// index: this set names them.
				p.SAdd(ctx, s.taskReposKey(), next.Repo)
			}
			s.expireClaimOf(ctx, p, next)
			if old != next.Status {
				if old != "" {
					p.SRem(ctx, s.statusKey(old), id)
					p.HIncrBy(ctx, s.statusCountsKey(), string(old), -1)
				}
				if next.Status != "" {
					p.SAdd(ctx, s.statusKey(next.Status), id)
					p.HIncrBy(ctx, s.statusCountsKey(), string(next.Status), 1)
				}
			}
			return nil
		})
		return err
	}
	for range maxTxRetries {
		err := s.rdb.Watch(ctx, txf, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue // another writer changed the task: read it again
		}
		return err
	}
	return fmt.Errorf("gave up after %d conflicting concurrent updates", maxTxRetries)
}

// ListTasks returns up to limit tasks, newest created first
// (DefaultListLimit when limit <= 0).
func (s *Store) ListTasks(ctx context.Context, limit int) ([]task.Task, error) {
	return s.FindTasks(ctx, task.Filter{Limit: limit})
}

// FindTasks returns the tasks f selects, newest created first. It reads
// the indexes: the status's set, the repository's tasks by creation time
// (IndexTasksByRepo fills it for tasks stored before it existed).
func (s *Store) FindTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultListLimit
	}
	byTime := s.tasksKey()
	if f.Repo != "" {
		byTime = s.repoTasksKey(f.Repo)
	}
	var ids []string
	var err error
	if f.Status == "" {
		ids, err = s.rdb.ZRevRange(ctx, byTime, 0, int64(f.Limit-1)).Result()
	} else {
		ids, err = s.newestOf(ctx, s.statusKey(f.Status), byTime, f.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("find tasks %+v: %w", f, err)
	}
	tasks, err := s.readTasks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("find tasks %+v: %w", f, err)
	}
	// A task that moved since the indexes were read is left out.
	kept := tasks[:0]
	for _, t := range tasks {
		if (f.Status == "" || t.Status == f.Status) && (f.Repo == "" || t.Repo == f.Repo) {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// newestOf returns up to limit members of the set that are in the sorted
// set byTime, highest score first.
func (s *Store) newestOf(ctx context.Context, set, byTime string, limit int) ([]string, error) {
	members, err := s.rdb.SMembers(ctx, set).Result()
	if err != nil || len(members) == 0 {
		return nil, err
	}
	scores, err := s.rdb.ZMScore(ctx, byTime, members...).Result()
	if err != nil {
		return nil, err
	}
	type scored struct {
		id    string
		score float64
	}
	var in []scored
	for i, id := range members {
		// ZMScore gives 0 for a member byTime lacks: the creation times
		// indexed are microseconds since 1970, never 0.
		if scores[i] != 0 {
			in = append(in, scored{id, scores[i]})
		}
	}
	slices.SortFunc(in, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	ids := make([]string, 0, min(limit, len(in)))
	for _, x := range in[:min(limit, len(in))] {
		ids = append(ids, x.id)
	}
	return ids, nil
}

// readTasks reads the tasks of ids, in that order; ids whose task is gone
// are skipped.
func (s *Store) readTasks(ctx context.Context, ids []string) ([]task.Task, error) {
	tasks := make([]task.Task, 0, len(ids))
	if len(ids) == 0 {
		return tasks, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.taskKey(id)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("read %d tasks: %w", len(keys), err)
	}
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // indexed but gone
		}
		var t task.Task
		if err := json.Unmarshal([]byte(str), &t); err != nil {
			return nil, fmt.Errorf("decode task %s: %w", ids[i], err)
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// IndexTasksByRepo adds the tasks stored before FindTasks had a
// per-repository index to it, once per store (a marker key records it
// done); it returns how many tasks it indexed. Running it twice, or from
// two processes at once, is harmless.
func (s *Store) IndexTasksByRepo(ctx context.Context) (int, error) {
	done := s.key("migrations", "repo_tasks")
	if n, err := s.rdb.Exists(ctx, done).Result(); err != nil {
		return 0, fmt.Errorf("index tasks by repository: %w", err)
	} else if n == 1 {
		return 0, nil
	}
	const page = 500
	indexed := 0
	for start := int64(0); ; start += page {
		ids, err := s.rdb.ZRange(ctx, s.tasksKey(), start, start+page-1).Result()
		if err != nil {
			return indexed, fmt.Errorf("index tasks by repository: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		tasks, err := s.readTasks(ctx, ids)
		if err != nil {
			return indexed, fmt.Errorf("index tasks by repository: %w", err)
		}
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, t := range tasks {
				if t.Repo != "" {
					p.ZAdd(ctx, s.repoTasksKey(t.Repo), redis.Z{Score: float64(t.CreatedAt.UnixMicro()), Member: t.ID})
					indexed++
				}
			}
			return nil
		})
		if err != nil {
			return indexed, fmt.Errorf("index tasks by repository: %w", err)
		}
	}
	if err := s.rdb.Set(ctx, done, time.Now().UTC().Format(time.RFC3339), 0).Err(); err != nil {
		return indexed, fmt.Errorf("index tasks by repository: %w", err)
	}
	return indexed, nil
}

// CountByStatus is the number of tasks in each status; statuses with none
// are absent.
func (s *Store) CountByStatus(ctx context.Context) (map[task.Status]int64, error) {
	raw, err := s.rdb.HGetAll(ctx, s.statusCountsKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("count tasks by status: %w", err)
	}
	counts := make(map[task.Status]int64, len(raw))
	for st, v := range raw {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("count tasks by status: %s count %q: %w", st, v, err)
		}
		if n > 0 {
			counts[task.Status(st)] = n
		}
	}
	return counts, nil
}

// ClaimGroup makes taskID the owner of the failure group fingerprint unless
// the group already has one, atomically. owner is the group's task: taskID
// when created is true, the earlier claimant's otherwise. A new claim lives
// for the triage TTL (see ClaimTTLs); saving the task sets its life by the
// task's status.
func (s *Store) ClaimGroup(ctx context.Context, fingerprint, taskID string) (owner string, created bool, err error) {
	if fingerprint == "" || taskID == "" {
		return "", false, fmt.Errorf("claim group %q for task %q: empty fingerprint or task id", fingerprint, taskID)
	}
	res, err := claimGroupScript.Run(ctx, s.rdb, []string{s.groupKey(fingerprint)}, taskID, s.ttls.Triage.Milliseconds()).Slice()
	if err != nil {
		return "", false, fmt.Errorf("claim group %s for task %s: %w", fingerprint, taskID, err)
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("claim group %s for task %s: unexpected reply %v", fingerprint, taskID, res)
	}
	owner, _ = res[0].(string)
	n, _ := res[1].(int64)
	return owner, n == 1, nil
}

// AddOccurrence counts one more occurrence of the failure group and returns
// the total.
func (s *Store) AddOccurrence(ctx context.Context, fingerprint string) (int64, error) {
	n, err := s.rdb.Incr(ctx, s.occurrencesKey(fingerprint)).Result()
	if err != nil {
		return 0, fmt.Errorf("count occurrence of group %s: %w", fingerprint, err)
	}
	return n, nil
}

// ReleaseGroup forgets the group's owner if it is still taskID, so that a
// later failure may claim the group; a group another task has claimed since
// is left alone.
// it again (for a group whose task was dropped). Occurrences are kept.
func (s *Store) ReleaseGroup(ctx context.Context, fingerprint, taskID string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.groupKey(fingerprint)}, taskID).Err(); err != nil {
		return fmt.Errorf("release group %s: %w", fingerprint, err)
	}
	return nil
}

// RecordRun adds one run of a test, failed or passed, to its history.
func (s *Store) RecordRun(ctx context.Context, testID string, failed bool) error {
	key := s.historyKey(testID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, key, "runs", 1)
		if failed {
			p.HIncrBy(ctx, key, "failures", 1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record run of %s: %w", testID, err)
	}
	return nil
}

// TestHistory is how many runs of a test were recorded and how many failed.
func (s *Store) TestHistory(ctx context.Context, testID string) (runs, failures int, err error) {
	vals, err := s.rdb.HMGet(ctx, s.historyKey(testID), "runs", "failures").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("read history of %s: %w", testID, err)
	}
	nums := [2]int{}
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		if nums[i], err = strconv.Atoi(str); err != nil {
			return 0, 0, fmt.Errorf("read history of %s: %q: %w", testID, str, err)
		}
	}
	return nums[0], nums[1], nil
}

// ClaimPublish takes the lock on publishing the group's pull request for
// owner, for ttl. It reports false when the group was already published or
// another owner holds the lock; an owner that claims again renews its lock.
// The lock expires, so a worker that died while publishing does not block
// the group forever.
func (s *Store) ClaimPublish(ctx context.Context, fingerprint, owner string, ttl time.Duration) (bool, error) {
	if fingerprint == "" || owner == "" {
		return false, fmt.Errorf("claim publish of %q for %q: empty fingerprint or owner", fingerprint, owner)
	}
	if ttl < time.Millisecond {
		return false, fmt.Errorf("claim publish of %s: ttl %s: must be at least 1ms", fingerprint, ttl)
	}
	n, err := s.claimPublish.Run(ctx, s.rdb,
		[]string{s.publishLockKey(fingerprint), s.publishedKey(fingerprint)},
		owner, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("claim publish of %s for %s: %w", fingerprint, owner, err)
	}
	return n == 1, nil
}

// ReleasePublish gives up owner's publish lock, after a publish that failed,
// so that a retry need not wait for the lock to expire. A lock another owner
// holds is left alone.
func (s *Store) ReleasePublish(ctx context.Context, fingerprint, owner string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.publishLockKey(fingerprint)}, owner).Err(); err != nil {
		return fmt.Errorf("release publish of %s for %s: %w", fingerprint, owner, err)
	}
	return nil
}

// MarkPublished records the group's pull request for good and releases the
// publish lock.
func (s *Store) MarkPublished(ctx context.Context, fingerprint, url string) error {
	if url == "" {
		return fmt.Errorf("mark group %s published: empty url", fingerprint)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.publishedKey(fingerprint), url, 0)
		p.Del(ctx, s.publishLockKey(fingerprint))
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark group %s published at %s: %w", fingerprint, url, err)
	}
	return nil
}

// Published returns the group's pull request, if one was recorded.
func (s *Store) Published(ctx context.Context, fingerprint string) (url string, ok bool, err error) {
	url, err = s.rdb.Get(ctx, s.publishedKey(fingerprint)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read publication of group %s: %w", fingerprint, err)
	}
	return url, true, nil
}

// IncrOutcome counts one outcome (published, landed, closed, no_patch, …).
func (s *Store) IncrOutcome(ctx context.Context, outcome string) error {
	if outcome == "" {
		return errors.New("count outcome: empty outcome")
	}
	if err := s.rdb.HIncrBy(ctx, s.outcomesKey(), outcome, 1).Err(); err != nil {
		return fmt.Errorf("count outcome %s: %w", outcome, err)
	}
	return nil
}

// Outcomes are the outcome counters.
func (s *Store) Outcomes(ctx context.Context) (map[string]int64, error) {
	raw, err := s.rdb.HGetAll(ctx, s.outcomesKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("read outcomes: %w", err)
	}
	out := make(map[string]int64, len(raw))
	for k, v := range raw {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read outcomes: %s count %q: %w", k, v, err)
		}
		out[k] = n
	}
	return out, nil
}
