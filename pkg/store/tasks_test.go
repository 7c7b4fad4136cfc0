package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

func newTask(id string, created time.Time, st task.Status) task.Task {
	return task.Task{
		ID:          id,
		Fingerprint: "fp-" + id,
		Repo:        "/repos/demo",
		Commit:      "0123456789abcdef",
		Failures:    []task.Failure{{Package: "example.com/demo", Test: "TestAdd"}},
		Status:      st,
		CreatedAt:   created,
		UpdatedAt:   created,
	}
}

func wantCounts(t *testing.T, s *Store, want map[task.Status]int64) {
	t.Helper()
	got, err := s.CountByStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	for st, n := range want {
		if got[st] != n {
			t.Fatalf("counts %v, want %v", got, want)
		}
	}
}

func testTasks(t *testing.T, s *Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if _, err := s.GetTask(ctx, "nope"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("get missing task: %v, want ErrNotFound", err)
	}
	if tasks, err := s.ListTasks(ctx, 10); err != nil || len(tasks) != 0 {
		t.Fatalf("list empty store: %v, %v", tasks, err)
	}
	wantCounts(t, s, map[task.Status]int64{})

	for i, st := range []task.Status{task.StatusQueued, task.StatusQueued, task.StatusDropped} {
		if err := s.SaveTask(ctx, newTask(fmt.Sprint("t", i), base.Add(time.Duration(i)*time.Minute), st)); err != nil {
			t.Fatal(err)
		}
	}
	wantCounts(t, s, map[task.Status]int64{task.StatusQueued: 2, task.StatusDropped: 1})

	got, err := s.GetTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprint != "fp-t1" || !got.CreatedAt.Equal(base.Add(time.Minute)) || len(got.Failures) != 1 {
		t.Fatalf("task read back: %+v", got)
	}

	if err := s.SetStatus(ctx, "t1", task.StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, "t1", task.StatusPublished, "pull request opened"); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.StatusPublished || got.Reason != "pull request opened" || !got.UpdatedAt.After(base.Add(time.Minute)) {
		t.Fatalf("after SetStatus: status %q reason %q updated %s", got.Status, got.Reason, got.UpdatedAt)
	}
	if got.Commit != "0123456789abcdef" {
		t.Fatalf("SetStatus lost the task's other fields: %+v", got)
	}
	wantCounts(t, s, map[task.Status]int64{task.StatusQueued: 1, task.StatusPublished: 1, task.StatusDropped: 1})

	// Saving a task again with the same status does not count it twice.
	again := got
	again.PullRequest = "https://example.com/pr/1"
	if err := s.SaveTask(ctx, again); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, map[task.Status]int64{task.StatusQueued: 1, task.StatusPublished: 1, task.StatusDropped: 1})

	// The status index holds the task under its current status only.
	rdb := s.rdb
	if ok, err := rdb.SIsMember(ctx, s.statusKey(task.StatusPublished), "t1").Result(); err != nil || !ok {
		t.Fatalf("t1 in the published index: %v, %v", ok, err)
	}
	if ok, err := rdb.SIsMember(ctx, s.statusKey(task.StatusQueued), "t1").Result(); err != nil || ok {
		t.Fatalf("t1 still in the queued index: %v, %v", ok, err)
	}

	list, err := s.ListTasks(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ids := taskIDs(list); fmt.Sprint(ids) != "[t2 t1 t0]" {
		t.Fatalf("ListTasks = %v, want newest first [t2 t1 t0]", ids)
	}
	if list[1].PullRequest != "https://example.com/pr/1" {
		t.Fatalf("listed t1 without its pull request: %+v", list[1])
	}
	list, err = s.ListTasks(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ids := taskIDs(list); fmt.Sprint(ids) != "[t2 t1]" {
		t.Fatalf("ListTasks(2) = %v, want [t2 t1]", ids)
	}

	// A task without times gets them.
	before := time.Now().Add(-time.Second)
	if err := s.SaveTask(ctx, task.Task{ID: "t3", Status: task.StatusQueued}); err != nil {
		t.Fatal(err)
	}
	t3, err := s.GetTask(ctx, "t3")
	if err != nil {
		t.Fatal(err)
	}
	if t3.CreatedAt.Before(before) || t3.UpdatedAt.Before(before) {
		t.Fatalf("task saved without times: created %s updated %s", t3.CreatedAt, t3.UpdatedAt)
	}
	if err := s.SaveTask(ctx, task.Task{}); err == nil {
		t.Fatal("saved a task without an id")
	}
}

func taskIDs(ts []task.Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// FindTasks selects by status, by repository, by both, newest first, up
// to the limit; a task that changes status moves between the answers.
func testFindTasks(t *testing.T, s *Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const shop, calc = "https://github.com/acme/shop", "https://github.com/acme/calc"
	for i, c := range []struct {
		repo string
		st   task.Status
	}{
		{shop, task.StatusQueued}, {calc, task.StatusQueued}, {shop, task.StatusPublished},
		{shop, task.StatusQueued}, {calc, task.StatusNoPatch}, {shop, task.StatusNoPatch},
	} {
		tk := newTask(fmt.Sprint("f", i), base.Add(time.Duration(i)*time.Minute), c.st)
		tk.Repo = c.repo
		if err := s.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	find := func(f task.Filter) string {
		t.Helper()
		ts, err := s.FindTasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(taskIDs(ts))
	}
	for _, c := range []struct {
		f    task.Filter
		want string
	}{
		{task.Filter{}, "[f5 f4 f3 f2 f1 f0]"},
		{task.Filter{Limit: 2}, "[f5 f4]"},
		{task.Filter{Status: task.StatusQueued}, "[f3 f1 f0]"},
		{task.Filter{Status: task.StatusQueued, Limit: 2}, "[f3 f1]"},
		{task.Filter{Repo: shop}, "[f5 f3 f2 f0]"},
		{task.Filter{Repo: calc, Limit: 1}, "[f4]"},
		{task.Filter{Repo: shop, Status: task.StatusNoPatch}, "[f5]"},
		{task.Filter{Repo: calc, Status: task.StatusPublished}, "[]"},
		{task.Filter{Status: task.StatusFailed}, "[]"},
		{task.Filter{Repo: "https://github.com/acme/none"}, "[]"},
	} {
		if got := find(c.f); got != c.want {
			t.Errorf("FindTasks(%+v) = %s, want %s", c.f, got, c.want)
		}
	}
	if err := s.SetStatus(ctx, "f0", task.StatusRunning, "attempt 1"); err != nil {
		t.Fatal(err)
	}
	if got := find(task.Filter{Status: task.StatusQueued, Repo: shop}); got != "[f3]" {
		t.Errorf("queued in shop after f0 started: %s, want [f3]", got)
	}
	if got := find(task.Filter{Status: task.StatusRunning}); got != "[f0]" {
		t.Errorf("running: %s, want [f0]", got)
	}
}

// Tasks stored before the per-repository index existed are found by
// repository once IndexTasksByRepo has run; it runs once per store.
func testIndexTasksByRepo(t *testing.T, s *Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		tk := newTask(fmt.Sprint("old", i), base.Add(time.Duration(i)*time.Minute), task.StatusDropped)
		tk.Repo = "https://github.com/acme/shop"
		if err := s.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	// As a store written by a version without the index holds them.
	if err := s.rdb.Del(ctx, s.repoTasksKey("https://github.com/acme/shop")).Err(); err != nil {
		t.Fatal(err)
	}
	if ts, err := s.FindTasks(ctx, task.Filter{Repo: "https://github.com/acme/shop"}); err != nil || len(ts) != 0 {
		t.Fatalf("before indexing: %v, %v; want none found", taskIDs(ts), err)
	}
	n, err := s.IndexTasksByRepo(ctx)
	if err != nil || n != 3 {
		t.Fatalf("IndexTasksByRepo = %d, %v; want 3", n, err)
	}
	ts, err := s.FindTasks(ctx, task.Filter{Repo: "https://github.com/acme/shop", Status: task.StatusDropped})
	if err != nil || fmt.Sprint(taskIDs(ts)) != "[old2 old1 old0]" {
		t.Fatalf("after indexing: %v, %v; want [old2 old1 old0]", taskIDs(ts), err)
	}
	if n, err := s.IndexTasksByRepo(ctx); err != nil || n != 0 {
		t.Fatalf("a second IndexTasksByRepo = %d, %v; want 0 (done once)", n, err)
	}
}

func testSetStatusMissing(t *testing.T, s *Store) {
	err := s.SetStatus(context.Background(), "ghost", task.StatusFailed, "boom")
	if !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("SetStatus of a missing task: %v, want ErrNotFound", err)
	}
	if _, err := s.GetTask(context.Background(), "ghost"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("SetStatus created the missing task: %v", err)
	}
	wantCounts(t, s, map[task.Status]int64{})
}

// Concurrent status changes of one task leave it counted once, under the
// status it ends with.
func testConcurrentStatus(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.SaveTask(ctx, newTask("hot", time.Now(), task.StatusQueued)); err != nil {
		t.Fatal(err)
	}
	statuses := []task.Status{task.StatusRunning, task.StatusNoPatch, task.StatusFailed, task.StatusPublished}
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.SetStatus(ctx, "hot", statuses[i%len(statuses)], fmt.Sprint("writer ", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	final, err := s.GetTask(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, map[task.Status]int64{final.Status: 1})
	for _, st := range append(statuses, task.StatusQueued) {
		n, err := s.rdb.SCard(ctx, s.statusKey(st)).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if st == final.Status {
			want = 1
		}
		if n != want {
			t.Fatalf("status index %s holds %d tasks, want %d (final status %s)", st, n, want, final.Status)
		}
	}
}

// Between a task's expiry and the sweep that removes its index entries, a
// listing still fills its page: the entries of tasks that are gone are
// skipped and older tasks read instead (limit=1 gave [] with thousands
// indexed, when the newest had expired).
func testFindTasksFillsThePagePastExpiredTasks(t *testing.T, s *Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	const repo = "https://github.com/acme/shop"
	for i := range 80 {
		tk := newTask(fmt.Sprint("e", i), base.Add(time.Duration(i)*time.Minute), task.StatusDropped)
		tk.Repo = repo
		if err := s.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		if i >= 10 {
			// Expired: Redis removed the key, the indexes still name it.
			if err := s.rdb.Del(ctx, s.taskKey(tk.ID)).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []task.Filter{{Limit: 1}, {Limit: 3, Status: task.StatusDropped}, {Limit: 3, Repo: repo}, {Limit: 3, Repo: repo, Status: task.StatusDropped}} {
		ts, err := s.FindTasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"e9", "e8", "e7"}[:f.Limit]
		if fmt.Sprint(taskIDs(ts)) != fmt.Sprint(want) {
			t.Errorf("FindTasks(%+v) = %v, want %v: the newest tasks that are still stored", f, taskIDs(ts), want)
		}
	}
	if ts, err := s.FindTasks(ctx, task.Filter{Limit: 100, Repo: repo}); err != nil || len(ts) != 10 {
		t.Errorf("FindTasks(limit 100) = %d tasks, %v; want the 10 stored", len(ts), err)
	}
}
