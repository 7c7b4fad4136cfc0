package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/task"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// retentionStore is a store on rdb with a retention of an hour and a
// clock of the test's.
func retentionStore(t *testing.T, rdb *redis.Client) (*Store, *clock) {
	t.Helper()
	s := New(rdb, testPrefix(t, rdb))
	c := &clock{t: time.Now()}
	s.now = c.now
	s.SetTaskRetention(time.Hour)
	return s, c
}

func repoTask(id, repo string, st task.Status) task.Task {
	tk := newTask(id, time.Now(), st)
	tk.Repo = repo
	return tk
}

// zcard and scard are the sizes of a sorted set and a set.
func zcard(t *testing.T, s *Store, key string) int64 {
	t.Helper()
	n, err := s.rdb.ZCard(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func scard(t *testing.T, s *Store, key string) int64 {
	t.Helper()
	n, err := s.rdb.SCard(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const (
	repoA = "https://github.com/acme/a"
	repoB = "https://github.com/acme/b"
)

// A finished task expires after the retention, with its index entries and
// per-task keys; queued and running tasks stay whatever their age.
func TestRetentionExpiresFinishedTasks(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			for _, tk := range []task.Task{
				repoTask("queued", repoA, task.StatusQueued),
				repoTask("running", repoA, task.StatusRunning),
				repoTask("dropped", repoA, task.StatusDropped),
				repoTask("published", repoB, task.StatusPublished),
				repoTask("no-patch", repoB, task.StatusNoPatch),
			} {
				if err := s.SaveTask(ctx, tk); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.RecordReported(ctx, "published", clk.now()); err != nil {
				t.Fatal(err)
			}
			// The TTL is set as the task reaches its final status.
			for id, want := range map[string]bool{"queued": false, "running": false, "dropped": true, "published": true, "no-patch": true} {
				ttl, err := s.rdb.PTTL(ctx, s.taskKey(id)).Result()
				if err != nil {
					t.Fatal(err)
				}
				if expires := ttl > 0; expires != want || ttl > time.Hour {
					t.Errorf("task %s: TTL %s; want expiring %v, within the retention (1h)", id, ttl, want)
				}
			}
			before, err := s.CountByStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}

			// Not yet due: the sweep removes nothing.
			clk.add(59 * time.Minute)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 0 {
				t.Fatalf("sweep before the retention passed: %d, %v; want 0", n, err)
			}
			clk.add(2 * time.Minute)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 3 {
				t.Fatalf("sweep: %d, %v; want the 3 finished tasks", n, err)
			}
			for _, id := range []string{"dropped", "published", "no-patch"} {
				if _, err := s.GetTask(ctx, id); !errors.Is(err, task.ErrNotFound) {
					t.Errorf("task %s after the sweep: %v, want ErrNotFound", id, err)
				}
			}
			if _, ok, err := s.Reported(ctx, "published"); err != nil || ok {
				t.Errorf("the report time of a swept task is kept: %v %v", ok, err)
			}
			all, err := s.FindTasks(ctx, task.Filter{})
			if err != nil || fmt.Sprint(taskIDs(all)) != "[running queued]" && fmt.Sprint(taskIDs(all)) != "[queued running]" {
				t.Errorf("tasks after the sweep: %v, %v; want queued and running", taskIDs(all), err)
			}
			if n := zcard(t, s, s.tasksKey()); n != 2 {
				t.Errorf("the task index holds %d, want 2", n)
			}
			if n := zcard(t, s, s.repoTasksKey(repoA)); n != 2 {
				t.Errorf("%s's index holds %d, want 2 (queued, running)", repoA, n)
			}
			if n := zcard(t, s, s.repoTasksKey(repoB)); n != 0 {
				t.Errorf("%s's index holds %d, want 0", repoB, n)
			}
			for _, st := range []task.Status{task.StatusDropped, task.StatusPublished, task.StatusNoPatch} {
				if n := scard(t, s, s.statusKey(st)); n != 0 {
					t.Errorf("status set %s holds %d, want 0", st, n)
				}
			}
			if n := zcard(t, s, s.taskExpiryKey()); n != 0 {
				t.Errorf("the expiry index holds %d, want 0", n)
			}
			// The counts by status are the dashboard's totals: expiry does
			// not take a task back.
			after, err := s.CountByStatus(ctx)
			if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("counts by status changed by the sweep: %v → %v (%v)", before, after, err)
			}
			// Queued and running tasks stay, however old.
			clk.add(365 * 24 * time.Hour)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 0 {
				t.Fatalf("sweep a year on: %d, %v; want 0 (active tasks never expire)", n, err)
			}
			for _, id := range []string{"queued", "running"} {
				if _, err := s.GetTask(ctx, id); err != nil {
					t.Errorf("active task %s: %v", id, err)
				}
			}
		})
	}
}

// A finished task whose key Redis expired before the sweep came is still
// removed from every index, though its status and repository are gone
// with it.
func TestRetentionSweepsTasksRedisExpired(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			for _, tk := range []task.Task{repoTask("a1", repoA, task.StatusFailed), repoTask("b1", repoB, task.StatusOverBudget)} {
				if err := s.SaveTask(ctx, tk); err != nil {
					t.Fatal(err)
				}
			}
			// As its TTL does once the retention has passed.
			if err := s.rdb.Del(ctx, s.taskKey("a1"), s.taskKey("b1")).Err(); err != nil {
				t.Fatal(err)
			}
			clk.add(2 * time.Hour)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 2 {
				t.Fatalf("sweep: %d, %v; want 2", n, err)
			}
			for key, n := range map[string]int64{
				s.tasksKey(): zcard(t, s, s.tasksKey()), s.taskExpiryKey(): zcard(t, s, s.taskExpiryKey()),
				s.repoTasksKey(repoA): zcard(t, s, s.repoTasksKey(repoA)), s.repoTasksKey(repoB): zcard(t, s, s.repoTasksKey(repoB)),
				s.statusKey(task.StatusFailed): scard(t, s, s.statusKey(task.StatusFailed)), s.statusKey(task.StatusOverBudget): scard(t, s, s.statusKey(task.StatusOverBudget)),
			} {
				if n != 0 {
					t.Errorf("%s holds %d after the sweep, want 0", key, n)
				}
			}
		})
	}
}

// Redis itself expires a finished task's key when its retention passes,
// with no sweep.
func TestRetentionTTLExpiresTheTask(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			s.SetTaskRetention(300 * time.Millisecond)
			if err := s.SaveTask(ctx, repoTask("short", repoA, task.StatusDropped)); err != nil {
				t.Fatal(err)
			}
			var err error
			testsvc.PollSeeing(t, 30*time.Second, "the task is gone after a retention of 300ms", func() string { return fmt.Sprintf("get: %v", err) }, func() bool {
				_, err = s.GetTask(ctx, "short")
				return errors.Is(err, task.ErrNotFound)
			})
		})
	}
}

// A finished task that is saved again in an active status loses its
// expiry; one saved again as finished starts its retention again.
func TestRetentionRestartsWhenSavedAgain(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			for _, id := range []string{"revived", "refinished"} {
				if err := s.SaveTask(ctx, repoTask(id, repoA, task.StatusFailed)); err != nil {
					t.Fatal(err)
				}
			}
			clk.add(50 * time.Minute)
			if err := s.SetStatus(ctx, "revived", task.StatusQueued, "retried"); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(ctx, "refinished", task.StatusNoPatch, "tried again"); err != nil {
				t.Fatal(err)
			}
			if ttl, err := s.rdb.PTTL(ctx, s.taskKey("revived")).Result(); err != nil || ttl != -1 {
				t.Errorf("a task moved back to queued has TTL %s (%v), want none", ttl, err)
			}
			clk.add(20 * time.Minute) // 70 minutes after the first finish, 20 after the second
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 0 {
				t.Fatalf("sweep: %d, %v; want 0", n, err)
			}
			clk.add(45 * time.Minute)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 1 {
				t.Fatalf("sweep an hour after the second finish: %d, %v; want 1", n, err)
			}
			if _, err := s.GetTask(ctx, "revived"); err != nil {
				t.Errorf("the queued task: %v", err)
			}
		})
	}
}

// With no retention, finished tasks are kept forever.
func TestRetentionOff(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			s.SetTaskRetention(0)
			if err := s.SaveTask(ctx, repoTask("kept", repoA, task.StatusPublished)); err != nil {
				t.Fatal(err)
			}
			if ttl, err := s.rdb.PTTL(ctx, s.taskKey("kept")).Result(); err != nil || ttl != -1 {
				t.Errorf("TTL %s (%v), want none", ttl, err)
			}
			clk.add(10 * 365 * 24 * time.Hour)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 0 {
				t.Fatalf("sweep: %d, %v; want 0", n, err)
			}
		})
	}
}

// Sweeps run at once by two replicas remove each task once between them.
func TestRetentionConcurrentSweeps(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			const n = 700 // more than one batch
			for i := range n {
				repo := []string{repoA, repoB}[i%2]
				if err := s.SaveTask(ctx, repoTask(fmt.Sprint("t", i), repo, task.StatusDropped)); err != nil {
					t.Fatal(err)
				}
			}
			clk.add(2 * time.Hour)
			other := New(rdb, s.prefix)
			other.now, other.retention = s.now, s.retention
			var wg sync.WaitGroup
			counts := make([]int, 2)
			errs := make([]error, 2)
			for i, st := range []*Store{s, other} {
				wg.Go(func() { counts[i], errs[i] = st.SweepExpiredTasks(ctx) })
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != n {
				t.Fatalf("two sweeps removed %v (%v), want %d between them", counts, errs, n)
			}
			for _, key := range []string{s.tasksKey(), s.taskExpiryKey(), s.repoTasksKey(repoA), s.repoTasksKey(repoB)} {
				if c := zcard(t, s, key); c != 0 {
					t.Errorf("%s holds %d, want 0", key, c)
				}
			}
		})
	}
}

// One replica sweeps per interval: while one sweeps, its lock (a lease)
// keeps the others out; once its sweep ended, the interval is marked swept.
func TestRetentionSweepTurn(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a := New(rdb, testPrefix(t, rdb))
			b := New(rdb, a.prefix)
			if ok, err := a.TakeSweepTurn(ctx, "bot-a", time.Hour); err != nil || !ok {
				t.Fatalf("first turn: %v %v", ok, err)
			}
			for _, st := range []*Store{a, b} {
				if ok, err := st.TakeSweepTurn(ctx, "bot-b", time.Hour); err != nil || ok {
					t.Fatalf("a second turn while the first sweeps: %v %v", ok, err)
				}
			}
			ttl, err := rdb.PTTL(ctx, a.retentionLockKey()).Result()
			if err != nil || ttl <= 0 || ttl > DefaultSweepLease {
				t.Fatalf("the lock lives %s (%v), want the lease", ttl, err)
			}
			if err := a.endSweep(ctx, "bot-a", time.Hour, true); err != nil {
				t.Fatal(err)
			}
			if ok, err := b.TakeSweepTurn(ctx, "bot-b", time.Hour); err != nil || ok {
				t.Fatalf("a turn in an interval already swept: %v %v", ok, err)
			}
			// As when the interval has passed.
			if err := rdb.Del(ctx, a.retentionSweptKey()).Err(); err != nil {
				t.Fatal(err)
			}
			if ok, err := b.TakeSweepTurn(ctx, "bot-b", time.Hour); err != nil || !ok {
				t.Fatalf("the turn after the interval: %v %v", ok, err)
			}
		})
	}
}

// A sweep's lock expires with its holder: a replica killed while it swept
// (it took the turn and never renewed or gave it back) holds up the
// retention for a lease, not for the hour of the interval. Another
// replica's RunRetention removes the due tasks once the lease lapses.
func TestRetentionLockExpiresWithItsHolder(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, clk := retentionStore(t, rdb)
			for i := range 3 {
				if err := s.SaveTask(ctx, repoTask(fmt.Sprint("due", i), repoA, task.StatusDropped)); err != nil {
					t.Fatal(err)
				}
			}
			clk.add(2 * time.Hour)
			dead := New(rdb, s.prefix)
			dead.sweepLease = 2 * time.Second
			if ok, err := dead.TakeSweepTurn(ctx, "killed-bot:1", time.Hour); err != nil || !ok {
				t.Fatalf("the killed replica's turn: %v %v", ok, err)
			}
			s.sweepLease, s.sweepCheck = 2*time.Second, 100*time.Millisecond
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.RunRetention(ctx, time.Hour, "live-bot:2", zap.NewNop())
			}()
			testsvc.PollSeeing(t, time.Minute, "the live replica sweeps once the killed one's lock lapsed",
				func() string { return fmt.Sprintf("%d tasks indexed", zcard(t, s, s.tasksKey())) },
				func() bool { return zcard(t, s, s.tasksKey()) == 0 })
			cancel()
			<-done
		})
	}
}

// Tasks stored before tasks had a retention are given one, once.
func TestIndexTaskExpiry(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, clk := retentionStore(t, rdb)
			s.SetTaskRetention(0)
			old := repoTask("old", repoA, task.StatusDropped)
			old.UpdatedAt = clk.now().Add(-2 * time.Hour)
			recent := repoTask("recent", repoB, task.StatusPublished)
			recent.UpdatedAt = clk.now()
			for _, tk := range []task.Task{old, recent, repoTask("active", repoB, task.StatusRunning)} {
				if err := s.SaveTask(ctx, tk); err != nil {
					t.Fatal(err)
				}
			}
			// As a store written by a version without retention holds them.
			if err := s.rdb.Del(ctx, s.taskReposKey(), s.taskExpiryKey()).Err(); err != nil {
				t.Fatal(err)
			}
			s.SetTaskRetention(time.Hour)
			n, err := s.IndexTaskExpiry(ctx)
			if err != nil || n != 2 {
				t.Fatalf("IndexTaskExpiry = %d, %v; want the 2 finished tasks", n, err)
			}
			repos, err := s.rdb.SMembers(ctx, s.taskReposKey()).Result()
			slices.Sort(repos)
			if err != nil || fmt.Sprint(repos) != fmt.Sprint([]string{repoA, repoB}) {
				t.Fatalf("repositories listed for the sweep: %v %v", repos, err)
			}
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 1 {
				t.Fatalf("sweep: %d, %v; want the task finished 2h ago", n, err)
			}
			if n := zcard(t, s, s.repoTasksKey(repoA)); n != 0 {
				t.Errorf("%s's index holds %d, want 0", repoA, n)
			}
			clk.add(61 * time.Minute)
			if n, err := s.SweepExpiredTasks(ctx); err != nil || n != 1 {
				t.Fatalf("sweep an hour on: %d, %v; want the published task", n, err)
			}
			if n, err := s.IndexTaskExpiry(ctx); err != nil || n != 0 {
				t.Fatalf("a second IndexTaskExpiry = %d, %v; want 0 (done once)", n, err)
			}
		})
	}
}
