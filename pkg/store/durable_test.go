package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/internal/testsvc"
)

// With a Durability, the writes that keep a group to one pull request
// count only once a replica has them: with the replica gone they fail
// (closed) instead of standing on the primary alone, where a failover
// would lose them.
func TestFencingWritesWaitForAReplica(t *testing.T) {
	rs := testsvc.StartRedisSentinel(t, 1)
	ctx := context.Background()
	primary, i := rs.Primary(ctx)
	if i != 0 {
		t.Fatalf("primary %s is data node %d, want 0", primary, i)
	}
	rdb := redis.NewClient(&redis.Options{Addr: primary})
	t.Cleanup(func() { _ = rdb.Close() })
	s := New(rdb, "durable")
	s.SetDurability(Durability{Replicas: 1, Timeout: time.Second})

	if _, created, err := s.ClaimGroup(ctx, "fp", "task-1"); err != nil || !created {
		t.Fatalf("claim group with a replica: %v, %v", created, err)
	}
	if ok, err := s.ClaimPublish(ctx, "fp", "worker-a", time.Minute); err != nil || !ok {
		t.Fatalf("claim publish with a replica: %v, %v", ok, err)
	}
	if err := s.MarkPublished(ctx, "fp", "https://example.com/pr/1"); err != nil {
		t.Fatalf("mark published with a replica: %v", err)
	}

	rs.Stop(1)
	testsvc.Poll(t, time.Minute, "the primary sees its replica gone", func() bool {
		info, err := rdb.Info(ctx, "replication").Result()
		return err == nil && !strings.Contains(info, "slave0:")
	})
	s.SetDurability(Durability{Replicas: 1, Timeout: 50 * time.Millisecond})
	if _, _, err := s.ClaimGroup(ctx, "fp2", "task-2"); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("claim group with no replica: %v, want ErrNotReplicated", err)
	}
	if _, err := s.ClaimPublish(ctx, "fp2", "worker-b", time.Minute); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("claim publish with no replica: %v, want ErrNotReplicated", err)
	}
	// The claim the primary made is given back: its owner was told it
	// does not hold it, and a claim nobody holds would block the group's
	// retries until it expired.
	if n, err := rdb.Exists(ctx, s.publishLockKey("fp2")).Result(); err != nil || n != 0 {
		t.Fatalf("publish lock of fp2 after a failed claim: exists %d (%v), want given back", n, err)
	}
	if err := s.MarkPublished(ctx, "fp2", "https://example.com/pr/2"); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("mark published with no replica: %v, want ErrNotReplicated", err)
	}
	// Without a Durability the same writes succeed on the primary alone.
	s.SetDurability(Durability{})
	if ok, err := s.ClaimPublish(ctx, "fp3", "worker-b", time.Minute); err != nil || !ok {
		t.Fatalf("claim publish with no durability: %v, %v", ok, err)
	}
}
