package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClaimPublish takes the lock on publishing the group's pull request for
// owner, for ttl. It reports false when the group was already published or
// another owner holds the lock; an owner that claims again renews its lock.
// The lock expires, so a worker that died while publishing does not block
// the group forever.
func (s *Store) ClaimPublish(ctx context.Context, fingerprint, owner string, ttl time.Duration) (bool, error) {
	if fingerprint == "" || owner == "" {
		return false, fmt.Errorf("claim publish of %q for %q: empty fingerprint or owner", fingerprint, owner)
	}
	if ttl < time.Millisecond {
		return false, fmt.Errorf("claim publish of %s: ttl %s: must be at least 1ms", fingerprint, ttl)
	}
	cmd, err := s.evalFenced(ctx, s.claimPublish,
		[]string{s.publishLockKey(fingerprint), s.publishedKey(fingerprint)},
		owner, ttl.Milliseconds())
	if err != nil {
		// The claim may stand on the primary all the same (made, but not
		// replicated in time; or made, and the answer lost): a claim its
		// owner was told it does not hold would block the group, this
		// owner's retries included, until it expires. Given back at once,
		// on a best-effort basis (a primary that cannot be reached keeps it
		// until its ttl).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.ReleasePublish(rctx, fingerprint, owner)
		return false, fmt.Errorf("claim publish of %s for %s: %w", fingerprint, owner, err)
	}
	n, err := cmd.Int64()
	if err != nil {
		return false, fmt.Errorf("claim publish of %s for %s: %w", fingerprint, owner, err)
	}
	return n == 1, nil
}

// ReleasePublish gives up owner's publish lock, after a publish that failed,
// so that a retry need not wait for the lock to expire. A lock another owner
// holds is left alone.
func (s *Store) ReleasePublish(ctx context.Context, fingerprint, owner string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.publishLockKey(fingerprint)}, owner).Err(); err != nil {
		return fmt.Errorf("release publish of %s for %s: %w", fingerprint, owner, err)
	}
	return nil
}

// MarkPublished records the group's pull request for good and releases the
// publish lock.
func (s *Store) MarkPublished(ctx context.Context, fingerprint, url string) error {
	if url == "" {
		return fmt.Errorf("mark group %s published: empty url", fingerprint)
	}
	_, err := s.evalFenced(ctx, markPublishedScript, []string{s.publishLockKey(fingerprint), s.publishedKey(fingerprint)}, url)
	if err != nil {
		return fmt.Errorf("mark group %s published at %s: %w", fingerprint, url, err)
	}
	return nil
}

// Published returns the group's pull request, if one was recorded.
func (s *Store) Published(ctx context.Context, fingerprint string) (url string, ok bool, err error) {
	url, err = s.rdb.Get(ctx, s.publishedKey(fingerprint)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read publication of group %s: %w", fingerprint, err)
	}
	return url, true, nil
}

// IncrOutcome counts one outcome (published, landed, closed, no_patch, …).
func (s *Store) IncrOutcome(ctx context.Context, outcome string) error {
	if outcome == "" {
		return errors.New("count outcome: empty outcome")
	}
	if err := s.rdb.HIncrBy(ctx, s.outcomesKey(), outcome, 1).Err(); err != nil {
		return fmt.Errorf("count outcome %s: %w", outcome, err)
	}
	return nil
}

// Outcomes are the outcome counters.
func (s *Store) Outcomes(ctx context.Context) (map[string]int64, error) {
	raw, err := s.rdb.HGetAll(ctx, s.outcomesKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("read outcomes: %w", err)
	}
	out := make(map[string]int64, len(raw))
	for k, v := range raw {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read outcomes: %s count %q: %w", k, v, err)
		}
		out[k] = n
	}
	return out, nil
}
