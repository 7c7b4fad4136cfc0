// Package retry starts a failure group's repair over on an operator's word,
// without a forge: `POST /api/v1/tasks/{id}/retry` and `bot replay --task`.
// A verdict that holds a group (dropped, no_patch: triage.verdict_ttl) or a
// task that failed is retried at once, as a new task of the group with a job
// of its own; a group whose repair is in hand or published is not.
package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/task"
)

// State is what a retry reads and keeps (store.Store).
type State interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	SaveTask(ctx context.Context, t task.Task) error
	NextRetry(ctx context.Context, fingerprint string) (int, error)
	GroupClaim(ctx context.Context, fingerprint string) (owner string, ttl time.Duration, ok bool, err error)
	ClaimGroup(ctx context.Context, fingerprint, taskID string) (owner string, created bool, err error)
	TakeOverGroup(ctx context.Context, fingerprint, from, taskID string) (bool, error)
}

// Jobs queues repairs (queue.Queue).
type Jobs interface {
	Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error)
}

// ErrRefused wraps every reason a group is not retried; other errors are
// the machinery's (task.ErrNotFound for a task that is not stored).
var ErrRefused = errors.New("not retried")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Retrier retries failure groups.
type Retrier struct {
	State State
	Jobs  Jobs
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (r Retrier) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Group starts the repair of the failure group of task id over, for by
// (who asked, for the task's reason): the group passes to a new task,
// queued with a job of its own (job.RetryID), and that task is returned.
// The task must be the group's latest, and must have ended without a pull
// request (dropped, no_patch, failed, over_budget); otherwise the error
// wraps ErrRefused and says why. An operator's retry is not held to
// triage's rules (the daily job budget, the opt-outs): asking is the
// decision; the worker still keeps to the repository's model budget.
func (r Retrier) Group(ctx context.Context, id, by string) (task.Task, error) {
	t, err := r.State.GetTask(ctx, id)
	if err != nil {
		return task.Task{}, fmt.Errorf("retry task %s: %w", id, err)
	}
	switch {
	case t.Status == task.StatusQueued || t.Status == task.StatusRunning:
		return task.Task{}, refused("task %s is %s: its repair is under way", id, t.Status)
	case t.Status == task.StatusPublished:
		return task.Task{}, refused("task %s published %s: a failure group has one pull request; close it (on a forge, `/redfix retry` on it then starts over)", id, t.PullRequest)
	case t.Fingerprint == "":
		return task.Task{}, refused("task %s names no failure group", id)
	}
	owner, _, held, err := r.State.GroupClaim(ctx, t.Fingerprint)
	if err != nil {
		return task.Task{}, fmt.Errorf("retry task %s: %w", id, err)
	}
	if held && owner != id {
		return task.Task{}, r.heldByAnother(ctx, id, owner)
	}
	n, err := r.State.NextRetry(ctx, t.Fingerprint)
	if err != nil {
		return task.Task{}, fmt.Errorf("retry task %s: %w", id, err)
	}
	base, _, _ := strings.Cut(id, "-retry-")
	nt := again(t, fmt.Sprintf("%s-retry-%d", base, n), fmt.Sprintf("retry %d of task %s, asked for by %s", n, id, by), r.now())
	if err := r.claim(ctx, t.Fingerprint, id, nt.ID, held); err != nil {
		return task.Task{}, err
	}
	// Queued first, then recorded, as triage does: the worker records the
	// task when it starts in any case.
	if _, err := r.Jobs.Enqueue(ctx, job.Job{ID: job.RetryID(t.Fingerprint, n), Task: nt}); err != nil {
		// No job: the new task fails, so that the group's next report
		// (or retry) takes it over at once.
		failed := nt
		failed.Status, failed.Reason = task.StatusFailed, "the retry could not be queued: "+err.Error()
		if serr := r.State.SaveTask(context.WithoutCancel(ctx), failed); serr != nil {
			err = fmt.Errorf("%w (and record the task: %v)", err, serr)
		}
		return task.Task{}, fmt.Errorf("retry task %s: %w", id, err)
	}
	if err := r.State.SaveTask(ctx, nt); err != nil {
		return task.Task{}, fmt.Errorf("retry task %s: record task %s: %w", id, nt.ID, err)
	}
	return nt, nil
}

// heldByAnother says why a task whose group another task holds is not
// retried.
func (r Retrier) heldByAnother(ctx context.Context, id, owner string) error {
	cur, err := r.State.GetTask(ctx, owner)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return refused("task %s holds the failure group now (being triaged)", owner)
	case err != nil:
		return fmt.Errorf("retry task %s: read task %s, which holds its group: %w", id, owner, err)
	case cur.Status.Active():
		return refused("task %s holds the failure group now (%s)", owner, cur.Status)
	}
	return refused("task %s is the failure group's latest (%s): retry that one", owner, cur.Status)
}

// claim passes the group to the new task: from the retried task when it
// holds it, else the group's claim taken afresh (its verdict expired).
func (r Retrier) claim(ctx context.Context, fingerprint, from, to string, held bool) error {
	if held {
		ok, err := r.State.TakeOverGroup(ctx, fingerprint, from, to)
		if err != nil {
			return fmt.Errorf("retry task %s: %w", from, err)
		}
		if !ok {
			return refused("another task took the failure group from task %s meanwhile", from)
		}
		return nil
	}
	owner, created, err := r.State.ClaimGroup(ctx, fingerprint, to)
	if err != nil {
		return fmt.Errorf("retry task %s: %w", from, err)
	}
	if !created && owner != to {
		return refused("task %s took the failure group meanwhile", owner)
	}
	return nil
}

// again is t as a new task with id, queued for reason.
func again(t task.Task, id, reason string, now time.Time) task.Task {
	t.ID, t.Status, t.Reason = id, task.StatusQueued, reason
	t.PullRequest, t.Rounds, t.Spend = "", nil, nil
	t.CreatedAt, t.UpdatedAt = now.UTC(), now.UTC()
	return t
}
