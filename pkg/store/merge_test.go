package store

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// Failures merged into a task are kept when a copy of the task that
// predates them (the worker's, from its job) is saved.
func testMergedFailuresKept(t *testing.T, s *Store) {
	ctx := context.Background()
	tk := newTask("task-m", time.Now(), task.StatusQueued)
	tk.Failures = []task.Failure{{Package: "p", Test: "TestA"}}
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if err := s.AddFailures(ctx, "task-m", []task.Failure{{Package: "p", Test: "TestB"}, {Package: "p", Test: "TestA"}}); err != nil {
		t.Fatal(err)
	}
	tk.Status = task.StatusRunning
	tk.Failures[0].Message = "now with a message"
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "task-m")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Failures) != 2 || got.Failures[0].Message != "now with a message" || got.Failures[1].Test != "TestB" || got.Status != task.StatusRunning {
		t.Errorf("failures after the worker's save: %+v (status %s)", got.Failures, got.Status)
	}
}
