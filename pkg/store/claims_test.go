package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
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
	testsvc.Poll(t, 30*time.Second, "a dead triage's claim lapses and the group is claimed again", func() bool {
		owner, created, err := s.ClaimGroup(ctx, "fp-dead", "task-next")
		if err != nil {
			t.Fatal(err)
		}
		return created && owner == "task-next"
	})
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
