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
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

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

// maxScanned bounds the index entries one listing reads, past the page,
// when many of them name tasks that are gone (expired before the sweep
// removed their entries) or have moved since the index was read.
const maxScanned = 20000

// FindTasks returns the tasks f selects, newest created first. It reads
// the indexes: the status's set, the repository's tasks by creation time
// (IndexTasksByRepo fills it for tasks stored before it existed). An entry
// whose task is gone (its key expired, and the retention sweep has not
// removed the entry yet) or no longer matches is skipped, and the listing
// reads on until it holds f.Limit tasks or the index ends, so that a page
// is never short while older tasks remain.
func (s *Store) FindTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultListLimit
	}
	byTime := s.tasksKey()
	if f.Repo != "" {
		byTime = s.repoTasksKey(f.Repo)
	}
	var ordered []string // the status's tasks, newest first
	if f.Status != "" {
		var err error
		if ordered, err = s.newestOf(ctx, s.statusKey(f.Status), byTime, maxScanned); err != nil {
			return nil, fmt.Errorf("find tasks %+v: %w", f, err)
		}
	}
	kept := make([]task.Task, 0, f.Limit)
	for start := 0; len(kept) < f.Limit && start < maxScanned; {
		n := min(max(2*(f.Limit-len(kept)), 32), maxScanned-start)
		var ids []string
		if f.Status == "" {
			var err error
			if ids, err = s.rdb.ZRevRange(ctx, byTime, int64(start), int64(start+n-1)).Result(); err != nil {
				return nil, fmt.Errorf("find tasks %+v: %w", f, err)
			}
		} else {
			ids = ordered[min(start, len(ordered)):min(start+n, len(ordered))]
		}
		if len(ids) == 0 {
			break
		}
		start += len(ids)
		tasks, err := s.readTasks(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("find tasks %+v: %w", f, err)
		}
		// A task that moved since the indexes were read is left out.
		for _, t := range tasks {
			if len(kept) < f.Limit && (f.Status == "" || t.Status == f.Status) && (f.Repo == "" || t.Repo == f.Repo) {
				kept = append(kept, t)
			}
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
	n, err := s.migrateTasks(ctx, s.key("migrations", "repo_tasks"), func(p redis.Pipeliner, t task.Task) bool {
		if t.Repo == "" {
			return false
		}
		p.ZAdd(ctx, s.repoTasksKey(t.Repo), redis.Z{Score: float64(t.CreatedAt.UnixMicro()), Member: t.ID})
		return true
	})
	if err != nil {
		return n, fmt.Errorf("index tasks by repository: %w", err)
	}
	return n, nil
}

// migrateTasks runs a migration over every stored task once per store:
// unless the marker key done is set, each page of tasks is read and apply
// queues its commands for each task in one pipeline; apply says whether
// it counted the task. The marker is set at the end, so a migration cut
// short runs again whole, and apply must be harmless twice.
func (s *Store) migrateTasks(ctx context.Context, done string, apply func(p redis.Pipeliner, t task.Task) bool) (int, error) {
	if n, err := s.rdb.Exists(ctx, done).Result(); err != nil {
		return 0, err
	} else if n == 1 {
		return 0, nil
	}
	const page = 500
	counted := 0
	for start := int64(0); ; start += page {
		ids, err := s.rdb.ZRange(ctx, s.tasksKey(), start, start+page-1).Result()
		if err != nil {
			return counted, err
		}
		if len(ids) == 0 {
			break
		}
		tasks, err := s.readTasks(ctx, ids)
		if err != nil {
			return counted, err
		}
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, t := range tasks {
				if apply(p, t) {
					counted++
				}
			}
			return nil
		})
		if err != nil {
			return counted, err
		}
	}
	if err := s.rdb.Set(ctx, done, s.now().UTC().Format(time.RFC3339), 0).Err(); err != nil {
		return counted, err
	}
	return counted, nil
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
