package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

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
	testsvc.Poll(t, 30*time.Second, "a publish lock with a 300ms TTL expires and worker-b claims it", func() bool {
		ok, err := s.ClaimPublish(ctx, "fp", "worker-b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
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
