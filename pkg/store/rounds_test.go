package store

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// A task's rounds are an attempt's evidence: a save that carries none (the
// next attempt starting) keeps them, a save with its own replaces them.
func testRoundsKept(t *testing.T, s *Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tk := newTask("t1", now, task.StatusRunning)
	tk.Status, tk.Reason = task.StatusQueued, "attempt 1 failed, retrying"
	tk.Rounds = []task.Round{
		{Attempt: 1, Candidate: 1, N: 1, Steps: 14, Verdict: task.RoundRejected, Gates: []task.Gate{{Name: "revert", Verdict: task.GateFail, Detail: "reverts 90%"}}, Patch: "+a\n", Trajectory: "{}\n"},
		{Attempt: 1, Candidate: 1, N: 2, Steps: 1, Verdict: task.RoundError, Reason: "feedback round 1: model API: 503"},
	}
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	next := newTask("t1", now, task.StatusRunning) // the job's copy: no rounds
	next.Reason = "attempt 2"
	if err := s.SaveTask(ctx, next); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rounds) != 2 || got.Rounds[0].Gates[0].Name != "revert" || got.Rounds[0].Patch != "+a\n" || got.Rounds[1].Verdict != task.RoundError {
		t.Fatalf("rounds after a save without any: %+v", got.Rounds)
	}
	next.Status, next.Reason = task.StatusNoPatch, "the agent's last change does not pass the failing tests"
	next.Rounds = []task.Round{{Attempt: 2, Candidate: 1, N: 1, Verdict: task.RoundTestsFail}}
	if err := s.SaveTask(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetTask(ctx, "t1"); err != nil || len(got.Rounds) != 1 || got.Rounds[0].Attempt != 2 {
		t.Fatalf("rounds after a save with its own: %+v, %v", got.Rounds, err)
	}
}

// FirstTime is true once per key, and never for a key whose "unless" key
// was remembered.
func testFirstTime(t *testing.T, s *Store) {
	ctx := context.Background()
	first := func(key string, unless ...string) bool {
		t.Helper()
		ok, err := s.FirstTime(ctx, key, time.Hour, unless...)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !first("repair:t1/7/1", "repair:t1/7") {
		t.Error("an attempt's first record was refused")
	}
	if first("repair:t1/7/1", "repair:t1/7") {
		t.Error("the same attempt recorded twice")
	}
	if !first("repair:t1/7") {
		t.Error("the job's first settlement was refused")
	}
	if first("repair:t1/7") {
		t.Error("a second settlement of the same job was allowed")
	}
	if first("repair:t1/7/2", "repair:t1/7") {
		t.Error("an attempt after the job settled was recorded")
	}
	if !first("repair:t1/8") {
		t.Error("another job's settlement was refused")
	}
	// The key expires.
	ttl, err := s.rdb.PTTL(ctx, s.onceKey("repair:t1/8")).Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("remembered for %v (%v), want at most an hour", ttl, err)
	}
}
