package worker

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/revert"
	"github.com/redfix/redfix/pkg/task"
)

// Reverts reverts a task's culprit (revert.Reverter): the pull request's
// page, or an error wrapping revert.ErrRefused with the reason.
type Reverts interface {
	Revert(ctx context.Context, t task.Task, cause revert.Cause, repo *revert.Repo) (string, error)
}

// revert asks for the revert of t's culprit for cause, under the
// repository's own policy when it has one (pol); ok when its pull request
// is open. A refusal or a failure leaves the task as it was (the
// failure logged): the repair's outcome stands.
func (p *Pipeline) revert(ctx context.Context, t task.Task, cause revert.Cause, pol *repoconfig.Policy, log *zap.Logger) (string, bool) {
	if p.Reverts == nil || t.Bisection.Blame == "" {
		return "", false
	}
	var repo *revert.Repo
	if pol != nil {
		repo = &revert.Repo{Enabled: pol.Revert.Enabled, MaxAge: pol.Revert.MaxAge, FirstPaths: pol.Revert.FirstPaths, PathAllowed: pol.PathAllowed}
	}
	url, err := p.Reverts.Revert(ctx, t, cause, repo)
	switch {
	case errors.Is(err, revert.ErrRefused) && cause == revert.FirstPaths:
		log.Debug("culprit not reverted first", zap.Error(err))
		return "", false
	case errors.Is(err, revert.ErrRefused):
		log.Info("culprit not reverted", zap.Stringer("cause", cause), zap.Error(err))
		return "", false
	case err != nil:
		log.Warn("revert the culprit", zap.Stringer("cause", cause), zap.Error(err))
		return "", false
	}
	p.progress("revert", "%s", url)
	return url, true
}
