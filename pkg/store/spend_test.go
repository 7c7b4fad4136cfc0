package store

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

func testTaskSpend(t *testing.T, s *Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if err := s.AddTaskSpend(ctx, "nope", task.Spend{Calls: 1}); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("spend of a missing task: %v", err)
	}
	tk := newTask("t1", now, task.StatusRunning)
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []task.Spend{
		{Model: "m1", Calls: 3, InputTokens: 1000, CachedTokens: 600, OutputTokens: 100, CostUSD: 0.01},
		{Model: "m1", Calls: 1, InputTokens: 200, OutputTokens: 20, CostUSD: 0.002},
	} {
		if err := s.AddTaskSpend(ctx, "t1", sp); err != nil {
			t.Fatal(err)
		}
	}
	// A later save without a spend (the next attempt starts) keeps it.
	tk.Status, tk.Reason = task.StatusNoPatch, "rejected by judge"
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := task.Spend{Model: "m1", Calls: 4, InputTokens: 1200, CachedTokens: 600, OutputTokens: 120, CostUSD: 0.012}
	if got.Spend == nil || got.Spend.Calls != want.Calls || got.Spend.InputTokens != want.InputTokens || got.Spend.CachedTokens != want.CachedTokens ||
		got.Spend.OutputTokens != want.OutputTokens || got.Spend.Model != want.Model || math.Abs(got.Spend.CostUSD-want.CostUSD) > 1e-9 {
		t.Errorf("spend = %+v, want %+v", got.Spend, want)
	}
	if got.Status != task.StatusNoPatch {
		t.Errorf("status = %s", got.Status)
	}
}

func testRepoSpend(t *testing.T, s *Store) {
	ctx := context.Background()
	day := time.Date(2026, 11, 23, 23, 59, 0, 0, time.UTC)
	if got, err := s.RepoSpend(ctx, "github.com/o/a", day); err != nil || got != (task.RepoSpend{}) {
		t.Fatalf("nothing spent: %+v, %v", got, err)
	}
	for _, add := range []struct {
		repo   string
		at     time.Time
		tokens int
		cost   float64
	}{
		{"github.com/o/a", day, 1200, 0.0125},
		{"github.com/o/a", day.Add(-23 * time.Hour), 800, 0.0075}, // the same UTC day
		{"github.com/o/a", day.Add(2 * time.Minute), 5000, 1},     // the next day
		{"github.com/o/b", day, 7, 0.5},
	} {
		if err := s.AddRepoSpend(ctx, add.repo, add.at, add.tokens, add.cost); err != nil {
			t.Fatal(err)
		}
	}
	// Another zone, the same instant: the same UTC day.
	got, err := s.RepoSpend(ctx, "github.com/o/a", day.In(time.FixedZone("east", 5*3600)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens != 2000 || math.Abs(got.CostUSD-0.02) > 1e-9 {
		t.Errorf("a's day = %+v, want 2000 tokens, $0.02", got)
	}
	if got, _ := s.RepoSpend(ctx, "github.com/o/a", day.Add(time.Hour)); got.Tokens != 5000 || got.CostUSD != 1 {
		t.Errorf("a's next day = %+v", got)
	}
	if got, _ := s.RepoSpend(ctx, "github.com/o/b", day); got.Tokens != 7 || got.CostUSD != 0.5 {
		t.Errorf("b's day = %+v", got)
	}
	ttl, err := s.rdb.TTL(ctx, s.spendKey("github.com/o/a", day)).Result()
	if err != nil || ttl <= 0 || ttl > spendTTL {
		t.Errorf("the counter's TTL = %v, %v; want up to %v", ttl, err, spendTTL)
	}
}
