// Package stale keeps redfix's open pull requests true: a periodic pass
// runs each one's failing tests at the default branch's head, without the
// pull request's change, in the sandbox; when they pass there (a person
// fixed it, or the test was removed), the pull request is closed with a
// comment that says which and why.
package stale

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Fixes are the published pull requests (store.Store).
type Fixes interface {
	OpenFixes(ctx context.Context, limit int) ([]task.Fix, error)
	GetTask(ctx context.Context, id string) (task.Task, error)
	RecordClosed(ctx context.Context, repo string, number int, merged, edited bool, at time.Time) (task.Fix, error)
}

// GitHub comments on and closes pull requests (gh.Clients).
type GitHub interface {
	Comment(ctx context.Context, repo string, number int, body string) (string, error)
	ClosePullRequest(ctx context.Context, repo string, number int) error
}

// Checkouts gives fresh work trees and the default branch's head
// (workspace.Mirrors).
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
	DefaultHead(ctx context.Context, src string) (branch, commit string, err error)
}

// Languages chooses a checkout's language driver (lang.Drivers).
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// Keeper runs the pass.
type Keeper struct {
	Fixes     Fixes
	GitHub    GitHub
	Checkouts Checkouts
	Languages Languages
	WorkDir   string
	// Max bounds the pull requests one pass looks at (0: 50).
	Max int
	Log *zap.Logger
}

// Pass looks at every open pull request once and closes those whose
// failing tests pass at the default branch's head; it returns how many it
// closed. One pull request's error is logged and the pass goes on.
func (k *Keeper) Pass(ctx context.Context) (int, error) {
	limit := k.Max
	if limit <= 0 {
		limit = 50
	}
	fixes, err := k.Fixes.OpenFixes(ctx, limit)
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, f := range fixes {
		if ctx.Err() != nil {
			return closed, ctx.Err()
		}
		log := k.Log.With(zap.String("pull_request", f.URL), zap.String("task_id", f.TaskID))
		why, err := k.check(ctx, f)
		if err != nil {
			log.Warn("check the pull request at the default branch's head", zap.Error(err))
			continue
		}
		if why == "" {
			continue
		}
		if _, err := k.GitHub.Comment(ctx, f.Repo, f.Number, why); err != nil {
			log.Warn("comment before closing", zap.Error(err))
			continue
		}
		if err := k.GitHub.ClosePullRequest(ctx, f.Repo, f.Number); err != nil {
			log.Warn("close the pull request", zap.Error(err))
			continue
		}
		if _, err := k.Fixes.RecordClosed(ctx, f.Repo, f.Number, false, false, time.Now()); err != nil {
			log.Warn("record the closing", zap.Error(err))
		}
		log.Info("closed: no longer needed", zap.String("why", why))
		closed++
	}
	return closed, nil
}

// check runs f's failing tests at its repository's default head, and
// returns the closing comment when they no longer fail there ("" when the
// pull request is still needed).
func (k *Keeper) check(ctx context.Context, f task.Fix) (string, error) {
	t, err := k.Fixes.GetTask(ctx, f.TaskID)
	if err != nil {
		return "", err
	}
	if len(t.Failures) == 0 {
		return "", nil
	}
	ctx = sandbox.WithRepo(ctx, t.Repo)
	branch, head, err := k.Checkouts.DefaultHead(ctx, t.Repo)
	if err != nil {
		return "", err
	}
	if head == t.Commit {
		return "", nil // the branch has not moved: nothing new to learn
	}
	ws, err := k.Checkouts.Open(ctx, t.Repo, head, k.WorkDir)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	d, err := k.Languages.For(t.Repo, ws.Dir)
	if err != nil {
		return "", err
	}
	if err := d.Setup(ctx, ws.Dir); err != nil {
		return "", fmt.Errorf("set up %s: %w", task.Short(head), err)
	}
	tests := t.Tests()
	out, err := d.Run(ctx, ws.Dir, tests, 1)
	if err != nil {
		return "", fmt.Errorf("run the failing tests at %s: %w", task.Short(head), err)
	}
	return Verdict(tests, out.Passed, out.Missing, len(out.Failed)+len(out.Build) > 0 || out.TimedOut, branch, head), nil
}

// Verdict is the closing comment for tests run at the default branch's
// head without the pull request's change, "" while the pull request is
// still needed: some failed, or some passed and none is gone.
func Verdict(tests, passed, missing []string, failed bool, branch, head string) string {
	if failed || len(tests) == 0 {
		return ""
	}
	var gone []string
	for _, id := range tests {
		if !slices.Contains(passed, id) {
			if !slices.Contains(missing, id) {
				return "" // neither passed nor missing: not known to be fixed
			}
			gone = append(gone, id)
		}
	}
	at := fmt.Sprintf("%s at %s", markdown.Code(branch), markdown.Code(task.Short(head)))
	if len(gone) > 0 {
		return fmt.Sprintf("Closing: the failing tests no longer exist on %s (%s: removed, or renamed), so this change is not needed any more.", at, codes(gone))
	}
	return fmt.Sprintf("Closing: the failing tests pass on %s without this change (%s): someone fixed the failure on the default branch, so this pull request is not needed any more.", at, codes(tests))
}

func codes(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = markdown.Code(id)
	}
	return strings.Join(out, ", ")
}
