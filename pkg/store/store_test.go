package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

// TestStoreRedis runs the suite against a real redis-server at
// REDFIX_TEST_REDIS_ADDR. Without it the suite is skipped, except under CI,
// where a skip would hide that the real server was never tested.
func TestStoreRedis(t *testing.T) {
	addr := os.Getenv("REDFIX_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDFIX_TEST_REDIS_ADDR is not set and CI is: CI must run the store tests against a real redis-server")
		}
		t.Skip("REDFIX_TEST_REDIS_ADDR is not set: skipping the store tests against a real Redis " +
			"(redis-server --port 6390 --daemonize yes --save '' --appendonly no; REDFIX_TEST_REDIS_ADDR=127.0.0.1:6390)")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at REDFIX_TEST_REDIS_ADDR=%s: %v", addr, err)
	}
	suite(t, rdb)
}

// TestStoreMiniredis runs the suite against the embedded server the demo
// uses.
func TestStoreMiniredis(t *testing.T) {
	suite(t, embeddedtest.Redis(t))
}

func suite(t *testing.T, rdb *redis.Client) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *Store)
	}{
		{"Tasks", testTasks},
		{"FindTasks", testFindTasks},
		{"IndexTasksByRepo", testIndexTasksByRepo},
		{"TakeOverGroup", testTakeOverGroup},
		{"SetStatusMissing", testSetStatusMissing},
		{"ConcurrentStatus", testConcurrentStatus},
		{"Groups", testGroups},
		{"ConcurrentClaimGroup", testConcurrentClaimGroup},
		{"ClaimLifetimes", testClaimLifetimes},
		{"ClaimExpires", testClaimExpires},
		{"History", testHistory},
		{"Publish", testPublish},
		{"PublishLockExpires", testPublishLockExpires},
		{"ConcurrentClaimPublish", testConcurrentClaimPublish},
		{"Outcomes", testOutcomes},
		{"Redacted", testRedacted},
		{"DailyBudget", testDailyBudget},
		{"MergedFailuresKept", testMergedFailuresKept},
		{"RepoSpend", testRepoSpend},
		{"TaskSpend", testTaskSpend},
		{"RoundsKept", testRoundsKept},
		{"FirstTime", testFirstTime},
		{"PrefixesAreIsolated", func(t *testing.T, s *Store) { testPrefixes(t, rdb) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, New(rdb, testPrefix(t, rdb)))
		})
	}
}

// testPrefix is unique to the test and run; the test's keys are deleted
// when it ends, so that a shared Redis does not fill up.
func testPrefix(t *testing.T, rdb *redis.Client) string {
	prefix := fmt.Sprintf("redfix-test:%s:%d", t.Name(), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+":*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("delete test keys: %v", err)
		}
	})
	return prefix
}

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

// A group passes to a new task only from the task that holds it.
func testTakeOverGroup(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, created, err := s.ClaimGroup(ctx, "fp-over", "old"); err != nil || !created {
		t.Fatalf("claim: %v %v", created, err)
	}
	if ok, err := s.TakeOverGroup(ctx, "fp-over", "someone-else", "new"); err != nil || ok {
		t.Fatalf("take over from a task that does not hold it: %v %v", ok, err)
	}
	if ok, err := s.TakeOverGroup(ctx, "fp-over", "old", "new"); err != nil || !ok {
		t.Fatalf("take over from the holder: %v %v", ok, err)
	}
	owner, ttl, ok, err := s.GroupClaim(ctx, "fp-over")
	if err != nil || !ok || owner != "new" || ttl <= 0 || ttl > s.ClaimTTLs().Triage {
		t.Fatalf("after the take-over: owner %q ttl %s ok %v err %v; want new with the triage claim's life", owner, ttl, ok, err)
	}
	if ok, err := s.TakeOverGroup(ctx, "fp-none", "old", "new"); err != nil || ok {
		t.Fatalf("take over an unclaimed group: %v %v", ok, err)
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

func testGroups(t *testing.T, s *Store) {
	ctx := context.Background()
	owner, created, err := s.ClaimGroup(ctx, "fp", "task-1")
	if err != nil || !created || owner != "task-1" {
		t.Fatalf("first claim: owner %q created %v err %v", owner, created, err)
	}
	owner, created, err = s.ClaimGroup(ctx, "fp", "task-2")
	if err != nil || created || owner != "task-1" {
		t.Fatalf("second claim: owner %q created %v err %v, want owner task-1", owner, created, err)
	}
	for want := int64(1); want <= 3; want++ {
		n, err := s.AddOccurrence(ctx, "fp")
		if err != nil || n != want {
			t.Fatalf("occurrence %d: got %d, %v", want, n, err)
		}
	}
	if err := s.ReleaseGroup(ctx, "fp", "task-2"); err != nil {
		t.Fatal(err)
	}
	if owner, created, err := s.ClaimGroup(ctx, "fp", "task-9"); err != nil || created || owner != "task-1" {
		t.Fatalf("a release by a task that does not own the group took effect: owner %q created %v err %v", owner, created, err)
	}
	if err := s.ReleaseGroup(ctx, "fp", "task-1"); err != nil {
		t.Fatal(err)
	}
	owner, created, err = s.ClaimGroup(ctx, "fp", "task-3")
	if err != nil || !created || owner != "task-3" {
		t.Fatalf("claim after release: owner %q created %v err %v", owner, created, err)
	}
	if n, err := s.AddOccurrence(ctx, "fp"); err != nil || n != 4 {
		t.Fatalf("occurrences after release: %d, %v, want 4 (release keeps them)", n, err)
	}
	if _, _, err := s.ClaimGroup(ctx, "", "task-4"); err == nil {
		t.Fatal("claimed a group without a fingerprint")
	}
}

func testConcurrentClaimGroup(t *testing.T, s *Store) {
	ctx := context.Background()
	const n = 50
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		owners  = map[string]int{}
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprint("task-", i)
			owner, created, err := s.ClaimGroup(ctx, "contended", id)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			owners[owner]++
			if created {
				winners = append(winners, id)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d claims created the group (%v), want exactly 1", len(winners), winners)
	}
	if owners[winners[0]] != n || len(owners) != 1 {
		t.Fatalf("claimants saw owners %v, want all %d to see %s", owners, n, winners[0])
	}
}

func testHistory(t *testing.T, s *Store) {
	ctx := context.Background()
	runs, failures, err := s.TestHistory(ctx, "pkg.TestNew")
	if err != nil || runs != 0 || failures != 0 {
		t.Fatalf("history of an unknown test: %d runs %d failures %v", runs, failures, err)
	}
	for _, failed := range []bool{true, false, true, false, false} {
		if err := s.RecordRun(ctx, "pkg.TestFlaky/sub", failed); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordRun(ctx, "pkg.TestOther", true); err != nil {
		t.Fatal(err)
	}
	runs, failures, err = s.TestHistory(ctx, "pkg.TestFlaky/sub")
	if err != nil || runs != 5 || failures != 2 {
		t.Fatalf("history: %d runs %d failures %v, want 5 and 2", runs, failures, err)
	}
	runs, failures, err = s.TestHistory(ctx, "pkg.TestOther")
	if err != nil || runs != 1 || failures != 1 {
		t.Fatalf("history of another test: %d runs %d failures %v, want 1 and 1", runs, failures, err)
	}
}

func testPublish(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, ok, err := s.Published(ctx, "fp"); err != nil || ok {
		t.Fatalf("published before anything: %v, %v", ok, err)
	}
	ok, err := s.ClaimPublish(ctx, "fp", "worker-a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("first claim: %v, %v", ok, err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute); err != nil || ok {
		t.Fatalf("claim while another owner holds the lock: %v, %v", ok, err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-a", time.Minute); err != nil || !ok {
		t.Fatalf("the owner claiming again: %v, %v, want renewed", ok, err)
	}
	// A release by someone who does not hold the lock changes nothing; the
	// holder's release lets another worker in at once.
	if err := s.ReleasePublish(ctx, "fp", "worker-b"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute); err != nil || ok {
		t.Fatalf("claim after a release by a non-holder: %v, %v", ok, err)
	}
	if err := s.ReleasePublish(ctx, "fp", "worker-a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute); err != nil || !ok {
		t.Fatalf("claim after the holder released: %v, %v", ok, err)
	}
	if err := s.MarkPublished(ctx, "fp", "https://example.com/pr/7"); err != nil {
		t.Fatal(err)
	}
	url, ok, err := s.Published(ctx, "fp")
	if err != nil || !ok || url != "https://example.com/pr/7" {
		t.Fatalf("published: %q %v %v", url, ok, err)
	}
	// Once published, nobody may publish the group again, its first owner
	// (a redelivered job) included.
	for _, owner := range []string{"worker-a", "worker-b"} {
		if ok, err := s.ClaimPublish(ctx, "fp", owner, time.Minute); err != nil || ok {
			t.Fatalf("claim by %s after publication: %v, %v", owner, ok, err)
		}
	}
	if _, err := s.ClaimPublish(ctx, "fp2", "worker-a", 0); err == nil {
		t.Fatal("claim with a zero ttl did not fail")
	}
	if err := s.MarkPublished(ctx, "fp2", ""); err == nil {
		t.Fatal("marked published with an empty url")
	}
}

func testPublishLockExpires(t *testing.T, s *Store) {
	ctx := context.Background()
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-a", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute); err != nil || ok {
		t.Fatalf("claim by another owner right away: %v, %v", ok, err)
	}
	// worker-a died while publishing: its lock expires and worker-b gets it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a publish lock with a 300ms TTL still held after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testConcurrentClaimPublish(t *testing.T, s *Store) {
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	start := make(chan struct{})
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := s.ClaimPublish(ctx, "fp", fmt.Sprint("worker-", i), time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d workers got the publish lock, want 1", wins)
	}
}

func testOutcomes(t *testing.T, s *Store) {
	ctx := context.Background()
	got, err := s.Outcomes(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("outcomes before any: %v, %v", got, err)
	}
	for _, o := range []string{"published", "landed", "published", "closed", "published"} {
		if err := s.IncrOutcome(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.Outcomes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["published"] != 3 || got["landed"] != 1 || got["closed"] != 1 || len(got) != 3 {
		t.Fatalf("outcomes %v", got)
	}
	if err := s.IncrOutcome(ctx, ""); err == nil {
		t.Fatal("counted an empty outcome")
	}
}

func testPrefixes(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	p := testPrefix(t, rdb)
	a, b := New(rdb, p+":a:"), New(rdb, p+":b")
	if err := a.SaveTask(ctx, newTask("x", time.Now(), task.StatusQueued)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetTask(ctx, "x"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("a task saved under one prefix is visible under another: %v", err)
	}
	if _, created, err := b.ClaimGroup(ctx, "fp", "y"); err != nil || !created {
		t.Fatalf("groups shared across prefixes: %v, %v", created, err)
	}
	if err := a.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}

func testRedacted(t *testing.T, s *Store) {
	s.Redact(redact.New("own-secret-value-123"))
	ctx := context.Background()
	in := task.Task{ID: "t-redact", Repo: "r", Status: task.StatusQueued, Reason: "saw own-secret-value-123",
		Failures: []task.Failure{{Test: "TestX", Message: "key AKIAQ3EXAMPLEFAKE7ZK", Output: "own-secret-value-123\n"}}}
	if err := s.SaveTask(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, in.ID, task.StatusFailed, "again own-secret-value-123"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(got)
	if strings.Contains(string(data), "own-secret-value-123") || strings.Contains(string(data), "AKIAQ3EXAMPLEFAKE7ZK") {
		t.Fatalf("a secret was stored: %s", data)
	}
	if got.Status != task.StatusFailed || got.Failures[0].Test != "TestX" {
		t.Fatalf("redaction lost the task: %+v", got)
	}
}
