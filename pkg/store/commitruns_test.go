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
		})
	}
}
