package forge

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// FixOf is the fix a task published as a change request on a forge, whose
// outcome the forge's events then follow; ok is false for a change request
// that is on no forge (a local one: there is no outcome to follow).
//
// A fix is kept under its repository's path on the forge (task.Fix.Repo,
// "owner/name" on GitHub), the key its events bring and the store has
// always used.
func (f *Forges) FixOf(url string) (fix task.Fix, ok bool) {
	_, repo, n, ok := f.ChangeOf(url)
	if !ok {
		return task.Fix{}, false
	}
	return task.Fix{Repo: repo.Path, Number: n, URL: url}, true
}

// FixRecorder saves tasks, and records each task published as a change
// request on a forge as a fix whose outcome the forge's events follow.
type FixRecorder struct {
	Forges *Forges
	Tasks  interface {
		SaveTask(ctx context.Context, t task.Task) error
	}
	Fixes interface {
		RecordPublished(ctx context.Context, f task.Fix) (bool, error)
	}
	Log *zap.Logger
}

// SaveTask saves t and, when it was published on a forge, records its fix.
func (r FixRecorder) SaveTask(ctx context.Context, t task.Task) error {
	if err := r.Tasks.SaveTask(ctx, t); err != nil {
		return err
	}
	if t.Status != task.StatusPublished {
		return nil
	}
	fix, ok := r.Forges.FixOf(t.PullRequest)
	if !ok {
		return nil // a local pull request: no outcome to follow
	}
	fix.TaskID, fix.Fingerprint = t.ID, t.Fingerprint
	created, err := r.Fixes.RecordPublished(ctx, fix)
	if err != nil {
		return fmt.Errorf("record fix %s: %w", t.PullRequest, err)
	}
	if created {
		r.Log.Info("fix published; following its outcome", zap.String("task_id", t.ID), zap.String("pull_request", t.PullRequest))
	}
	return nil
}

// Fixes reads the published fixes' outcomes (store.Store).
type Fixes interface {
	GetFix(ctx context.Context, repo string, number int) (task.Fix, error)
}

// ChangeState is where a change request on a forge stands, from the
// outcomes its events recorded in fixes; ok is false for a local one (or
// one not recorded).
func ChangeState(forges *Forges, fixes Fixes) func(ctx context.Context, url string) (state string, ok bool) {
	return func(ctx context.Context, url string) (string, bool) {
		fix, ok := forges.FixOf(url)
		if !ok {
			return "", false
		}
		f, err := fixes.GetFix(ctx, fix.Repo, fix.Number)
		if err != nil {
			return "", false
		}
		return string(f.State), true
	}
}
