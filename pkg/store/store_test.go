package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
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
		{"FindTasksFillsThePagePastExpiredTasks", testFindTasksFillsThePagePastExpiredTasks},
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
