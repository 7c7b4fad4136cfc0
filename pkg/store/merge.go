package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// AddFailures adds failures to a task (those it holds already, by test ID,
// are left as they are): failures of other groups found to share its
// blame commit.
func (s *Store) AddFailures(ctx context.Context, id string, failures []task.Failure) error {
	err := s.updateTask(ctx, id, func(cur *task.Task) (task.Task, error) {
		if cur == nil {
			return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
		}
		have := map[string]bool{}
		for _, f := range cur.Failures {
			have[f.ID()] = true
		}
		for _, f := range failures {
			if !have[f.ID()] {
				have[f.ID()] = true
				cur.Failures = append(cur.Failures, f)
			}
		}
		cur.UpdatedAt = time.Now().UTC()
		return *cur, nil
	})
	if err != nil {
		return fmt.Errorf("add failures to task %s: %w", id, err)
	}
	return nil
}

// keepMerged is next with the failures of stored that it lacks appended.
func keepMerged(next, stored []task.Failure) []task.Failure { return task.MergeFailures(next, stored) }
