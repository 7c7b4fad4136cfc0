package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// ClaimTTLs bound how long a failure group's claim lives in each state, so
// that no claim outlives the work behind it: a crashed triage's claim
// expires, a verdict is reconsidered when the failure recurs later.
type ClaimTTLs struct {
	// Triage is the claim's life while triage works on the group; triage
	// refreshes it (RefreshGroup) while it runs, so only a dead triage lets
	// it lapse.
	Triage time.Duration
	// Active is its life once the task is queued or running; each status
	// change renews it.
	Active time.Duration
	// Verdict is its life once the task was dropped (flaky, does not
	// reproduce, …) or the repair ended without a pull request: the same
	// failure reported after that is triaged again.
	Verdict time.Duration
	// Published is its life once a pull request was published.
	Published time.Duration
}

// DefaultClaimTTLs are the store's claim lives unless SetClaimTTLs says
// otherwise.
var DefaultClaimTTLs = ClaimTTLs{Triage: 5 * time.Minute, Active: 24 * time.Hour, Verdict: 6 * time.Hour, Published: 30 * 24 * time.Hour}

// SetClaimTTLs replaces the claim lives; zero fields keep their defaults.
func (s *Store) SetClaimTTLs(c ClaimTTLs) {
	if c.Triage <= 0 {
		c.Triage = DefaultClaimTTLs.Triage
	}
	if c.Active <= 0 {
		c.Active = DefaultClaimTTLs.Active
	}
	if c.Verdict <= 0 {
		c.Verdict = DefaultClaimTTLs.Verdict
	}
	if c.Published <= 0 {
		c.Published = DefaultClaimTTLs.Published
	}
	s.ttls = c
}

// ClaimTTLs are the claim lives in use.
func (s *Store) ClaimTTLs() ClaimTTLs { return s.ttls }

// claimTTL is how long a claim lives once its task has status st.
func (s *Store) claimTTL(st task.Status) time.Duration {
	switch st {
	case task.StatusQueued, task.StatusRunning:
		return s.ttls.Active
	case task.StatusPublished:
		return s.ttls.Published
	case "":
		return s.ttls.Triage
	default:
		return s.ttls.Verdict
	}
}

// Scripts on group claims.
var (
	// The group's owner, whether it was set now (1) or before (0); a new
	// claim lives ARGV[2] ms.
	claimGroupScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return {cur, 0} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {ARGV[1], 1}
`)
	expireOwnedScript = redis.NewScript(expireOwnedSrc)
	// ARGV[1]'s claim renewed for ARGV[2] ms, or set again when no task
	// holds the group: 1; another task holds it: 0.
	refreshGroupScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`)
)

// expireOwnedSrc sets the claim's life to ARGV[2] ms if ARGV[1] still
// holds it.
const expireOwnedSrc = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`

// RefreshGroup renews taskID's claim on the group for the triage TTL, and
// takes it back when it lapsed meanwhile (a live triage whose refresh came
// late on a loaded machine keeps its group). It reports false only when
// another task holds the group now.
func (s *Store) RefreshGroup(ctx context.Context, fingerprint, taskID string) (bool, error) {
	n, err := refreshGroupScript.Run(ctx, s.rdb, []string{s.groupKey(fingerprint)}, taskID, s.ttls.Triage.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("refresh claim of group %s for task %s: %w", fingerprint, taskID, err)
	}
	return n == 1, nil
}

// takeOverGroupScript passes the group's claim from ARGV[1] to ARGV[2] for
// ARGV[3] ms, only if ARGV[1] holds it: 1 when it did.
var takeOverGroupScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// TakeOverGroup makes taskID the group's owner, with the triage claim's
// life, if from still owns it: for a task that ended with no verdict on
// the failure. It reports false when another task owns the group now (a
// report triaged at the same time took it first).
func (s *Store) TakeOverGroup(ctx context.Context, fingerprint, from, taskID string) (bool, error) {
	n, err := takeOverGroupScript.Run(ctx, s.rdb, []string{s.groupKey(fingerprint)}, from, taskID, s.ttls.Triage.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("take group %s over from task %s for task %s: %w", fingerprint, from, taskID, err)
	}
	return n == 1, nil
}

// GroupClaim is the group's current owner and how long its claim has
// left; ok is false when the group is unclaimed.
func (s *Store) GroupClaim(ctx context.Context, fingerprint string) (owner string, ttl time.Duration, ok bool, err error) {
	key := s.groupKey(fingerprint)
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, key)
		pttl = p.PTTL(ctx, key)
		return nil
	})
	if err != nil && err != redis.Nil {
		return "", 0, false, fmt.Errorf("read claim of group %s: %w", fingerprint, err)
	}
	owner, gerr := get.Result()
	if gerr != nil {
		return "", 0, false, nil
	}
	return owner, pttl.Val(), true, nil
}

// releaseOwnedSrc deletes the claim if ARGV[1] still holds it.
const releaseOwnedSrc = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

// expireClaimOf queues, in p, the claims' new lives after t was saved: its
// group's by its status; its blame commit's as long as the task is active
// (queued, running, published), released once it ends otherwise, so that a
// later failure of the same commit is merged into it only while it can
// still matter.
func (s *Store) expireClaimOf(ctx context.Context, p redis.Pipeliner, t task.Task) {
	if t.Fingerprint != "" {
		p.Eval(ctx, expireOwnedSrc, []string{s.groupKey(t.Fingerprint)}, t.ID, s.claimTTL(t.Status).Milliseconds())
	}
	if t.BlameClaim == "" {
		return
	}
	if t.Status == "" || t.Status.Active() {
		p.Eval(ctx, expireOwnedSrc, []string{s.groupKey(t.BlameClaim)}, t.ID, s.claimTTL(t.Status).Milliseconds())
	} else {
		p.Eval(ctx, releaseOwnedSrc, []string{s.groupKey(t.BlameClaim)}, t.ID)
	}
}

// ClaimGroup makes taskID the owner of the failure group fingerprint unless
// the group already has one, atomically. owner is the group's task: taskID
// when created is true, the earlier claimant's otherwise. A new claim lives
// for the triage TTL (see ClaimTTLs); saving the task sets its life by the
// task's status.
func (s *Store) ClaimGroup(ctx context.Context, fingerprint, taskID string) (owner string, created bool, err error) {
	if fingerprint == "" || taskID == "" {
		return "", false, fmt.Errorf("claim group %q for task %q: empty fingerprint or task id", fingerprint, taskID)
	}
	cmd, err := s.evalFenced(ctx, claimGroupScript, []string{s.groupKey(fingerprint)}, taskID, s.ttls.Triage.Milliseconds())
	if err != nil {
		return "", false, fmt.Errorf("claim group %s for task %s: %w", fingerprint, taskID, err)
	}
	res, err := cmd.Slice()
	if err != nil {
		return "", false, fmt.Errorf("claim group %s for task %s: %w", fingerprint, taskID, err)
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("claim group %s for task %s: unexpected reply %v", fingerprint, taskID, res)
	}
	owner, _ = res[0].(string)
	n, _ := res[1].(int64)
	return owner, n == 1, nil
}

// AddOccurrence counts one more occurrence of the failure group and returns
// the total.
func (s *Store) AddOccurrence(ctx context.Context, fingerprint string) (int64, error) {
	n, err := s.rdb.Incr(ctx, s.occurrencesKey(fingerprint)).Result()
	if err != nil {
		return 0, fmt.Errorf("count occurrence of group %s: %w", fingerprint, err)
	}
	return n, nil
}

// ReleaseGroup forgets the group's owner if it is still taskID, so that a
// later failure may claim the group; a group another task has claimed since
// is left alone.
// it again (for a group whose task was dropped). Occurrences are kept.
func (s *Store) ReleaseGroup(ctx context.Context, fingerprint, taskID string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.groupKey(fingerprint)}, taskID).Err(); err != nil {
		return fmt.Errorf("release group %s: %w", fingerprint, err)
	}
	return nil
}
