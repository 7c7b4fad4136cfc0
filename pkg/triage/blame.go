package triage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// FailureMerger adds failures to an existing task; store.Store satisfies
// it. With it, the failures of a group whose blame commit another task
// already owns are added to that task.
type FailureMerger interface {
	AddFailures(ctx context.Context, taskID string, failures []task.Failure) error
}

// BlameGroup is the group key of a blame commit in a repository: one task
// per breaking commit, however many tests it broke.
func BlameGroup(repo, blame string) string {
	h := sha256.Sum256([]byte("blame\x00" + normalizeRepo(repo) + "\x00" + blame))
	return "blame-" + hex.EncodeToString(h[:])[:32]
}

// bisect bisects a group's tests. When an earlier group of the same report
// was blamed on commit B, it first searches from B's parent: if B is this
// group's culprit too, a few runs around B confirm it instead of a whole
// search. Otherwise it searches from good.
func (p *process) bisect(ctx context.Context, b bisect.Bisector, repo gitrepo.Repo, good, bad string, ids []string, log *zap.Logger) (task.Bisection, error) {
	spent, cached := 0, 0
	for _, prior := range p.blames {
		if prior.Good == "" || prior.Good == bad || !repo.IsAncestor(ctx, prior.Good, bad) {
			continue
		}
		bis, err := b.BisectFailing(ctx, repo, prior.Good, bad, ids)
		spent += bis.Steps
		cached += bis.CachedRuns
		switch {
		case err == nil && bis.Blame == prior.Blame:
			log.Info("same culprit as an earlier group", zap.String("blame", bis.Blame), zap.Int("steps", bis.Steps))
			return bis, nil
		case err != nil && !errors.Is(err, bisect.ErrCannotBisect):
			return bis, err
		}
	}
	bis, err := b.BisectFailing(ctx, repo, good, bad, ids)
	bis.Steps += spent
	bis.CachedRuns += cached
	if err == nil && bis.Blame != "" {
		p.blames = append(p.blames, bis)
	}
	return bis, err
}

// claimBlame makes the task the owner of its blame commit's group. When
// another task owns it, the failures are added to that task (if the store
// can) and the owner's ID is returned. The claim lives while triage works
// and then, through the task's BlameClaim, as long as the owner is queued,
// running or published (the store follows its status): across reports,
// groups blamed on the same commit are merged into it while it is active;
// within one report, always.
func (p *process) claimBlame(ctx context.Context, repo, blame, taskID string, failures []task.Failure) (owner string, err error) {
	key := BlameGroup(repo, blame)
	var existing string
	created := false
	for _, c := range p.blameClaims {
		if c.key == key && c.taskID != taskID {
			// A task of this report owns it: merge, whether or not its
			// claim in the store has lapsed meanwhile.
			existing = c.taskID
			if _, err := p.t.store.RefreshGroup(ctx, key, existing); err != nil {
				return "", fmt.Errorf("renew blame commit %s: %w", task.Short(blame), err)
			}
		}
	}
	if existing == "" {
		var err error
		existing, created, err = p.t.store.ClaimGroup(ctx, key, taskID)
		if err != nil {
			return "", fmt.Errorf("claim blame commit %s: %w", task.Short(blame), err)
		}
		if !created && existing != taskID {
			// Another report's task.
			if created, err = p.takeOverBlame(ctx, key, blame, existing, taskID); err != nil {
				return "", err
			}
		}
	}
	if created || existing == taskID {
		// Ours: claimed now, taken over, or claimed by this task's
		// interrupted delivery.
		p.blameClaims = append(p.blameClaims, blameClaim{key: key, taskID: taskID})
		return "", nil
	}
	if m, ok := p.t.store.(FailureMerger); ok && existing != taskID {
		if err := m.AddFailures(ctx, existing, failures); err != nil {
			return existing, fmt.Errorf("merge into task %s: %w", existing, err)
		}
	}
	return existing, nil
}

type blameClaim struct{ key, taskID string }

// takeOverBlame takes the blame commit's claim from owner, a task of
// another report, when owner is saved and no longer active: the store
// keeps a claim only while its task is queued, running or published, so a
// claim held by a task that ended otherwise is one the store has not let
// go of yet, or one whose bot died before giving it back (its report's
// redelivery can then be dropped as a duplicate of this very task, and
// deferring to it would leave the failure with no task at all). A task not
// saved yet is still being triaged, or its bot died: merging into it fails
// and the report is retried, by when it has decided or its claim lapsed.
func (p *process) takeOverBlame(ctx context.Context, key, blame, owner, taskID string) (bool, error) {
	prev, err := p.t.store.GetTask(ctx, owner)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read task %s, which holds blame commit %s: %w", owner, task.Short(blame), err)
	case prev.Status.Active():
		return false, nil
	}
	ok, err := p.t.store.TakeOverGroup(ctx, key, owner, taskID)
	if err != nil {
		return false, fmt.Errorf("take blame commit %s over from task %s: %w", task.Short(blame), owner, err)
	}
	if !ok {
		// Another task took it meanwhile: decided on the next delivery.
		return false, fmt.Errorf("blame commit %s changed hands while task %s took it over from %s", task.Short(blame), taskID, owner)
	}
	return true, nil
}

// releaseBlame gives up the blame claims of a task that was not queued.
func (p *process) releaseBlame(ctx context.Context, taskID string, log *zap.Logger) {
	for _, c := range p.blameClaims {
		if c.taskID != taskID {
			continue
		}
		if err := p.t.store.ReleaseGroup(ctx, c.key, taskID); err != nil {
			log.Error("release blame group", zap.Error(err))
		}
	}
}
