// Package commitcheck shows triage's verdict on the red commit of a
// repository on a forge as a check on the commit, and keeps it true
// as the repair goes on: the failing tests, reliable or flaky, the
// culprit with bisection's confidence, then the fix or revert pull
// request and where it stands (the words are triage's, triage.CheckText).
package commitcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/repourl"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// Store is what the check run reads: the tasks it shows
// and their pull requests' outcomes (store.Store).
type Store interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	GetFix(ctx context.Context, repo string, number int) (task.Fix, error)
}

// Forges chooses the forge a repository lives on, and reads its change
// requests' addresses (forge.Forges).
type Forges interface {
	ForURL(repoURL string) (forge.Driver, forge.RepoID, error)
	FixOf(url string) (task.Fix, bool)
}

// Checks writes checks on a repository's commits (a forge driver).
type Checks interface {
	CommitChecks(ctx context.Context, repo forge.RepoID, commit, name string) ([]forge.CheckState, error)
	CreateCheck(ctx context.Context, repo forge.RepoID, c forge.Check) (int64, error)
	UpdateCheck(ctx context.Context, repo forge.RepoID, id int64, c forge.Check) error
}

// writeTimeout bounds the writing of one check run: the report or
// the job waits for it, and a forge that does not answer only costs the
// check run.
const writeTimeout = 30 * time.Second

// maxTasks bounds the tasks one check run shows (and lists in its
// external id): a report's groups past triage's cap are one task already.
const maxTasks = 24

// Check shows triage's verdict on the red commit of a repository on one
// of Forges whose driver writes checks, as the check run triage.CheckName: written when
// triage decides a report's groups, and again when a worker settles one of
// their tasks (its fix or revert pull request, or why there is none) or
// the pull request is merged or closed. The check run's external id lists
// the tasks it shows, so that each writer shows them all, as the store has
// them now: a redelivered report or a retried job rewrites the same check
// run, never a second one. Its conclusion is always neutral (see
// docs/github-app.md). A check run that cannot be written is logged and
// never stops the report or the job.
type Check struct {
	Forges Forges
	Store  Store
	Log    *zap.Logger
}

// Decided shows the report's decided groups on their commit
// (triage.Verdicts).
func (v *Check) Decided(ctx context.Context, repo string, outs []triage.Outcome) {
	var commits []string
	byCommit := map[string][]task.Task{}
	for _, o := range outs {
		if o.Task == nil {
			continue
		}
		c := o.Task.Commit
		if _, ok := byCommit[c]; !ok {
			commits = append(commits, c)
		}
		byCommit[c] = append(byCommit[c], *o.Task)
	}
	for _, c := range commits {
		v.show(ctx, repo, c, byCommit[c])
	}
}

// Settled shows t's new state on its commit.
func (v *Check) Settled(ctx context.Context, t task.Task) {
	v.show(ctx, t.Repo, t.Commit, []task.Task{t})
}

// Outcome shows where a fix or revert pull request stands now that it was
// merged, closed or reopened.
func (v *Check) Outcome(ctx context.Context, f task.Fix) {
	if f.TaskID == "" {
		return
	}
	t, err := v.Store.GetTask(ctx, f.TaskID)
	if err != nil {
		v.Log.Warn("read the task of a pull request's outcome", zap.String("task_id", f.TaskID), zap.Error(err))
		return
	}
	v.Settled(ctx, t)
}

// show writes the check run on commit with add among its tasks (each
// read back from the store); a failure is logged.
func (v *Check) show(ctx context.Context, repo, commit string, add []task.Task) {
	if !fullCommit(commit) {
		return // no commit to show it on
	}
	d, id, err := v.Forges.ForURL(repo)
	if err != nil {
		return // a repository elsewhere
	}
	ch, ok := d.(Checks)
	if !ok {
		return // a forge without checks
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if err := v.write(ctx, ch, id, repo, commit, add); err != nil {
		v.Log.Warn("show triage's verdict as a check run", zap.String("repo", repo), zap.String("commit", commit), zap.Error(err))
	}
}

func (v *Check) write(ctx context.Context, ch Checks, on forge.RepoID, repo, commit string, add []task.Task) error {
	have, err := ch.CommitChecks(ctx, on, commit, triage.CheckName)
	if err != nil {
		return err
	}
	var id int64
	var ids []string
	for _, h := range have {
		if h.Name == triage.CheckName {
			id, ids = h.ID, strings.Fields(strings.ReplaceAll(h.ExternalID, ",", " "))
			break
		}
	}
	for _, t := range add {
		if !slices.Contains(ids, t.ID) {
			ids = append(ids, t.ID)
		}
	}
	ids = ids[max(0, len(ids)-maxTasks):]
	tasks, err := v.tasks(ctx, repo, commit, ids)
	if err != nil || len(tasks) == 0 {
		return err
	}
	ids = ids[:0]
	fixes := map[string]task.Fix{}
	details := ""
	for _, t := range tasks {
		ids = append(ids, t.ID)
		if t.PullRequest == "" {
			continue
		}
		if details == "" {
			details = t.PullRequest
		}
		if fix, ok := v.Forges.FixOf(t.PullRequest); ok {
			if f, err := v.Store.GetFix(ctx, fix.Repo, fix.Number); err == nil {
				fixes[t.PullRequest] = f
			}
		}
	}
	title, summary := triage.CheckText(tasks, fixes)
	run := forge.Check{
		Name: triage.CheckName, Commit: commit,
		// Neutral, whatever the verdict: the commit's CI says whether it
		// is red, this check only says what redfix made of it.
		Conclusion: forge.ConclusionNeutral,
		Title:      title, Summary: summary, Text: triage.CheckDetails(tasks),
		DetailsURL: details, ExternalID: strings.Join(ids, ","),
	}
	if id != 0 {
		return ch.UpdateCheck(ctx, on, id, run)
	}
	_, err = ch.CreateCheck(ctx, on, run)
	return err
}

// tasks reads ids from the store, as they stand now (redacted as the
// store keeps them). Only tasks of repo at commit are kept: the ids come
// from the check run, and a task of another repository is never shown
// here, whatever the check run's external id says. A task the store no
// longer has is left out.
func (v *Check) tasks(ctx context.Context, repo, commit string, ids []string) ([]task.Task, error) {
	out := make([]task.Task, 0, len(ids))
	for _, id := range ids {
		t, err := v.Store.GetTask(ctx, id)
		switch {
		case err == nil && t.Commit == commit && sameRepo(t.Repo, repo):
			out = append(out, t)
		case err != nil && !errors.Is(err, task.ErrNotFound):
			return nil, fmt.Errorf("read task %s: %w", id, err)
		}
	}
	return out, nil
}

// fullCommit says c is a whole commit hash, as a check run needs.
func fullCommit(c string) bool {
	if len(c) != 40 && len(c) != 64 {
		return false
	}
	return strings.Trim(c, "0123456789abcdef") == ""
}

// Tasks records a worker's tasks through Next and shows those that settle on
// their commit's verdict check run.
type Tasks struct {
	Next interface {
		SaveTask(ctx context.Context, t task.Task) error
	}
	Check *Check
}

func (t Tasks) SaveTask(ctx context.Context, tk task.Task) error {
	if err := t.Next.SaveTask(ctx, tk); err != nil {
		return err
	}
	if tk.Status != task.StatusRunning {
		t.Check.Settled(ctx, tk)
	}
	return nil
}

// sameRepo says a and b name one repository: the same canonical form, or,
// for names that have none, the same name without a trailing slash or
// .git, case aside.
func sameRepo(a, b string) bool {
	ca, err1 := repourl.Canonical(a)
	cb, err2 := repourl.Canonical(b)
	if err1 != nil || err2 != nil {
		return strings.EqualFold(strings.TrimSuffix(strings.TrimRight(a, "/"), ".git"), strings.TrimSuffix(strings.TrimRight(b, "/"), ".git"))
	}
	return ca == cb
}
