package store

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A repository's daily budget is counted per UTC day, never past its
// limit even under concurrent takes; a returned job frees its place.
func testDailyBudget(t *testing.T, s *Store) {
	ctx := context.Background()
	day := time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("x", -2*3600)) // 24 Nov UTC
	const repo = "https://github.com/acme/widgets"
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := s.TakeDailyJob(ctx, repo, day, 3)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if taken != 3 {
		t.Fatalf("taken %d of a budget of 3", taken)
	}
	if n, err := s.DailyJobs(ctx, repo, day); err != nil || n != 3 {
		t.Errorf("daily jobs = %d, %v", n, err)
	}
	if err := s.ReturnDailyJob(ctx, repo, day); err != nil {
		t.Fatal(err)
	}
	if ok, used, err := s.TakeDailyJob(ctx, repo, day, 3); err != nil || !ok || used != 3 {
		t.Errorf("after a return: taken %v used %d err %v", ok, used, err)
	}
	// The next UTC day, and another repository, have budgets of their own.
	if ok, used, err := s.TakeDailyJob(ctx, repo, day.Add(24*time.Hour), 3); err != nil || !ok || used != 1 {
		t.Errorf("next day: taken %v used %d err %v", ok, used, err)
	}
	if ok, _, err := s.TakeDailyJob(ctx, "https://github.com/acme/other", day, 3); err != nil || !ok {
		t.Errorf("other repository: taken %v err %v", ok, err)
	}
	if n, _ := s.DailyJobs(ctx, repo, day.Add(-24*time.Hour)); n != 0 {
		t.Errorf("the day before counts %d", n)
	}
	if ttl := s.rdb.PTTL(ctx, s.budgetKey(repo, day)).Val(); ttl <= 0 || ttl > budgetTTL {
		t.Errorf("counter TTL %s", ttl)
	}
}
