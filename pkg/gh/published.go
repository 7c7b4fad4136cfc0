package gh

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// PullRequestRef names a pull request by its web address:
// https://HOST/OWNER/NAME/pull/N (github.com or GitHub Enterprise Server).
func PullRequestRef(u string) (repo string, number int, ok bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" && pu.Scheme != "http" {
		return "", 0, false
	}
	parts := strings.Split(strings.Trim(pu.Path, "/"), "/")
	if len(parts) < 4 || parts[len(parts)-2] != "pull" {
		return "", 0, false
	}
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return parts[len(parts)-4] + "/" + parts[len(parts)-3], n, true
}

// FixRecorder saves tasks, and records each task published as a pull
// request on GitHub as a fix whose outcome the webhooks then follow
// (pkg/gh/deliveries). A local pull request has no outcome to follow.
type FixRecorder struct {
	Tasks interface {
		SaveTask(ctx context.Context, t task.Task) error
	}
	Fixes interface {
		RecordPublished(ctx context.Context, f task.Fix) (bool, error)
	}
	Log *zap.Logger
}

// SaveTask saves t and, when it was published on GitHub, records its fix.
func (r FixRecorder) SaveTask(ctx context.Context, t task.Task) error {
	if err := r.Tasks.SaveTask(ctx, t); err != nil {
		return err
	}
	if t.Status != task.StatusPublished {
		return nil
	}
	repo, n, ok := PullRequestRef(t.PullRequest)
	if !ok {
		return nil // a local pull request: no outcome to follow
	}
	created, err := r.Fixes.RecordPublished(ctx, task.Fix{Repo: repo, Number: n, URL: t.PullRequest, TaskID: t.ID, Fingerprint: t.Fingerprint})
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

// PullRequestState is where a pull request on GitHub stands, from the
// outcomes its webhooks recorded in fixes; ok is false for a local one (or
// one not recorded).
func PullRequestState(fixes Fixes) func(ctx context.Context, url string) (state string, ok bool) {
	return func(ctx context.Context, url string) (string, bool) {
		repo, n, ok := PullRequestRef(url)
		if !ok {
			return "", false
		}
		f, err := fixes.GetFix(ctx, repo, n)
		if err != nil {
			return "", false
		}
		return string(f.State), true
	}
}
