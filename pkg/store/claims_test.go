package store

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// A claim's life follows its task's status: short while triage works,
// long while queued or running, a verdict's life once dropped or ended
// without a pull request, longest once published. Only the owner's task
// moves it.
func testClaimLifetimes(t *testing.T, s *Store) {
	ctx := context.Background()
	s.SetClaimTTLs(ClaimTTLs{Triage: time.Minute, Active: 2 * time.Hour, Verdict: 3 * time.Hour, Published: 400 * time.Hour})
	ttl := func(fp string) (string, time.Duration) {
		t.Helper()
		owner, d, ok, err := s.GroupClaim(ctx, fp)
		if err != nil || !ok {
			t.Fatalf("claim of %s: ok=%v err=%v", fp, ok, err)
		}
		return owner, d
	}
	near := func(got, want time.Duration) bool { return got <= want && got > want-time.Minute }

	if _, created, err := s.ClaimGroup(ctx, "fp-a", "task-a"); err != nil || !created {
		t.Fatalf("claim: %v %v", created, err)
	}
	if _, d := ttl("fp-a"); !near(d, time.Minute) {
		t.Fatalf("a new claim lives %s, want the triage TTL", d)
	}
	tk := newTask("task-a", time.Now(), task.StatusQueued)
	tk.Fingerprint = "fp-a"
	for _, c := range []struct {
		st   task.Status
		want time.Duration
	}{
		{task.StatusQueued, 2 * time.Hour},
		{task.StatusRunning, 2 * time.Hour},
		{task.StatusNoPatch, 3 * time.Hour},
		{task.StatusDropped, 3 * time.Hour},
		{task.StatusFailed, 3 * time.Hour},
		{task.StatusPublished, 400 * time.Hour},
	} {
		tk.Status = c.st
		if err := s.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		if owner, d := ttl("fp-a"); owner != "task-a" || !near(d, c.want) {
			t.Errorf("after %s: owner %s, life %s, want %s", c.st, owner, d, c.want)
		}
	}
	// Another task of the group does not touch the owner's claim.
	other := newTask("task-b", time.Now(), task.StatusDropped)
	other.Fingerprint = "fp-a"
	if err := s.SaveTask(ctx, other); err != nil {
		t.Fatal(err)
	}
	if owner, d := ttl("fp-a"); owner != "task-a" || !near(d, 400*time.Hour) {
		t.Errorf("another task moved the claim: %s %s", owner, d)
	}
	if held, err := s.RefreshGroup(ctx, "fp-a", "task-b"); err != nil || held {
		t.Errorf("refresh by a non-owner: %v %v", held, err)
	}
	if held, err := s.RefreshGroup(ctx, "fp-a", "task-a"); err != nil || !held {
		t.Errorf("refresh by the owner: %v %v", held, err)
	}
	if _, d := ttl("fp-a"); !near(d, time.Minute) {
		t.Errorf("refreshed claim lives %s, want the triage TTL", d)
	}
	// A claim that lapsed under a live triage is taken back by its refresh.
	if err := s.rdb.Del(ctx, s.groupKey("fp-a")).Err(); err != nil {
		t.Fatal(err)
	}
	if held, err := s.RefreshGroup(ctx, "fp-a", "task-a"); err != nil || !held {
		t.Errorf("refresh of a lapsed claim: %v %v", held, err)
	}
	if owner, d := ttl("fp-a"); owner != "task-a" || !near(d, time.Minute) {
		t.Errorf("lapsed claim after refresh: owner %q, life %s, want task-a for the triage TTL", owner, d)
	}
}

// A claim left by a triage that died (no refresh, no task saved) lapses,
// and the group can be claimed again.
func testClaimExpires(t *testing.T, s *Store) {
	ctx := context.Background()
	s.SetClaimTTLs(ClaimTTLs{Triage: 300 * time.Millisecond})
	if _, created, err := s.ClaimGroup(ctx, "fp-dead", "task-dead"); err != nil || !created {
		t.Fatalf("claim: %v %v", created, err)
	}
	if owner, created, err := s.ClaimGroup(ctx, "fp-dead", "task-next"); err != nil || created || owner != "task-dead" {
		t.Fatalf("claim while held: %s %v %v", owner, created, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		owner, created, err := s.ClaimGroup(ctx, "fp-dead", "task-next")
		if err != nil {
			t.Fatal(err)
		}
		if created && owner == "task-next" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a dead triage's claim never lapsed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
