package store

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/task"
)

func TestCommitRuns(t *testing.T) {
	rdbs := map[string]*redis.Client{"miniredis": embeddedtest.Redis(t)}
	if addr := os.Getenv("REDFIX_TEST_REDIS_ADDR"); addr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		rdbs["redis"] = rdb
	} else if os.Getenv("CI") != "" {
		t.Fatal("REDFIX_TEST_REDIS_ADDR is not set and CI is: CI must run the store tests against a real redis-server")
	}
	for name, rdb := range rdbs {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			prefix := fmt.Sprintf("redfix-test-commitruns-%d", time.Now().UnixNano())
			s := New(rdb, prefix)
			t.Cleanup(func() { rdb.Del(context.Background(), s.commitRunsKey("pkg.TestA")) })
			for _, add := range []struct {
				commit string
				runs   task.CommitRuns
			}{
				{"aaa", task.CommitRuns{Passed: 1}},
				{"aaa", task.CommitRuns{Failed: 2}},
				{"bbb", task.CommitRuns{Missing: 1}},
				{"ccc", task.CommitRuns{Skipped: 1}},
				{"aaa", task.CommitRuns{Passed: 3}},
			} {
				if err := s.AddCommitRuns(ctx, "pkg.TestA", add.commit, add.runs); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.CommitRuns(ctx, "pkg.TestA")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]task.CommitRuns{
				"aaa": {Passed: 4, Failed: 2},
				"bbb": {Missing: 1},
				"ccc": {Skipped: 1},
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("runs = %v, want %v", got, want)
			}
			if !got["aaa"].Flaky() || got["bbb"].Flaky() {
				t.Errorf("flaky: aaa %v bbb %v", got["aaa"].Flaky(), got["bbb"].Flaky())
			}
			if ttl := rdb.TTL(ctx, s.commitRunsKey("pkg.TestA")).Val(); ttl <= 0 || ttl > CommitRunsTTL {
				t.Errorf("ttl %v, want up to %v", ttl, CommitRunsTTL)
			}
			none, err := s.CommitRuns(ctx, "pkg.TestNone")
			if err != nil || len(none) != 0 {
				t.Errorf("runs of an unknown test = %v, %v", none, err)
			}

			t.Cleanup(func() { rdb.Del(context.Background(), s.quarantineKey()) })
			now := time.Now().UTC().Truncate(time.Second)
			for _, e := range []task.QuarantineEntry{
				{Test: "pkg.TestA", Repo: "r", Runs: 5, Failures: 2, SeenAt: now.Add(-time.Hour), Reason: "flaky: 2/5"},
				{Test: "pkg.TestB", Repo: "r", Runs: 5, Failures: 1, SeenAt: now.Add(-time.Minute)},
				{Test: "pkg.TestA", Repo: "r", Runs: 10, Failures: 3, SeenAt: now, Reason: "flaky: 3/10"},
			} {
				if err := s.Quarantine(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			q, err := s.Quarantined(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != 2 || q[0].Test != "pkg.TestA" || q[0].Failures != 3 || q[0].Reason != "flaky: 3/10" || !q[0].SeenAt.Equal(now) || q[1].Test != "pkg.TestB" {
				t.Errorf("quarantine = %+v", q)
			}
			if q, err := s.Quarantined(ctx, 1); err != nil || len(q) != 1 {
				t.Errorf("quarantine limited to 1 = %+v, %v", q, err)
			}
		})
	}
}
