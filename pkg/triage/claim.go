package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// groupClaims is a Store that tells who holds a group without claiming it.
type groupClaims interface {
	GroupClaim(ctx context.Context, fingerprint string) (owner string, ttl time.Duration, ok bool, err error)
}

// takeOverFrom are the statuses of a group's task that leave the group to
// the next report of the failure at once: that task ended with no verdict
// on the failure itself (an infrastructure error, the day's budget).
// A task that ended with a verdict (no_patch: the agent's repair did not
// pass the gates; dropped: flaky, not reproduced, fixed, a person's fix
// in flight, ...) keeps the group until the verdict's claim expires
// (triage.verdict_ttl): repairing the same failure again on every CI run
// would spend a repair each time on what was just tried.
var takeOverFrom = []task.Status{task.StatusFailed, task.StatusOverBudget}

// ownedByAnother decides about a group that task owner holds: this task
// takes it over (tookOver) when owner ended with no verdict on the
// failure; otherwise reason says why this one is dropped.
func (t *Triage) ownedByAnother(ctx context.Context, fingerprint, owner, id string) (reason string, tookOver bool, err error) {
	prev, err := t.store.GetTask(ctx, owner)
	if errors.Is(err, task.ErrNotFound) {
		// Its triage is still running (it saves the task when it decides).
		return "duplicate of task " + owner, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read task %s, which holds group %s: %w", owner, fingerprint, err)
	}
	switch {
	case slices.Contains(takeOverFrom, prev.Status):
		ok, err := t.store.TakeOverGroup(ctx, fingerprint, owner, id)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return "duplicate: another task took the group over from task " + owner + ", which ended " + string(prev.Status), false, nil
		}
		return "", true, nil
	case prev.Status == task.StatusNoPatch || prev.Status == task.StatusDropped:
		again := "once that verdict expires (triage.verdict_ttl)"
		if _, ttl, ok, err := t.store.GroupClaim(ctx, fingerprint); err == nil && ok && ttl > 0 {
			again = fmt.Sprintf("in %s, when that verdict expires (triage.verdict_ttl)", ttl.Round(time.Minute))
		}
		return fmt.Sprintf("same failure as task %s, which ended without a fix (%s: %s); triaged again %s",
			owner, prev.Status, clip(prev.Reason, 200), again), false, nil
	}
	// Queued, running, or published: the failure is in hand.
	return "duplicate of task " + owner, false, nil
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// keepClaim renews the group's claim until stop is called, so that the
// claim of a live triage does not lapse while that of a dead one does. A
// claim that lapsed all the same (a refresh late on a loaded machine) is
// taken back. When another task holds the group, work is cancelled and
// lostTo names that task.
func (t *Triage) keepClaim(ctx context.Context, fingerprint, id string, log *zap.Logger) (work context.Context, lostTo func() string, stop func()) {
	every := t.cfg.ClaimRefresh
	if every <= 0 {
		every = time.Minute
	}
	work, cancel := context.WithCancel(ctx)
	var (
		mu    sync.Mutex
		owner string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-tick.C:
			}
			held, err := t.store.RefreshGroup(work, fingerprint, id)
			switch {
			case err != nil && work.Err() == nil:
				log.Warn("refresh group claim", zap.Error(err))
			case err == nil && !held:
				cur := t.claimOwner(work, fingerprint)
				log.Warn("another task took the group while this triage ran; stopping", zap.String("owner", cur))
				mu.Lock()
				owner = cur
				mu.Unlock()
				cancel()
				return
			}
		}
	}()
	lostTo = func() string {
		mu.Lock()
		defer mu.Unlock()
		return owner
	}
	return work, lostTo, func() {
		cancel()
		<-done
	}
}

// claimOwner names the group's owner when the store can tell,
// unknownOwner otherwise.
func (t *Triage) claimOwner(ctx context.Context, fingerprint string) string {
	if c, ok := t.store.(groupClaims); ok {
		if owner, _, ok, err := c.GroupClaim(ctx, fingerprint); err == nil && ok {
			return owner
		}
	}
	return unknownOwner
}

const unknownOwner = "another task"
