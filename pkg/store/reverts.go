package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The revert ledger: one revert pull request per culprit commit, ever. A
// culprit's key holds "pending:<owner>" while a revert is being made (with
// a time to live, so that a worker that died does not block it for good)
// and the pull request's address once it is open (for good).

func (s *Store) revertKey(culprit string) string { return s.key("revert", strings.ToLower(culprit)) }

const revertPending = "pending:"

// ClaimRevert takes the right to revert culprit for owner, for ttl. It
// reports false, with the pull request's address when there is one, when
// culprit was reverted already or another owner is reverting it.
func (s *Store) ClaimRevert(ctx context.Context, culprit, owner string, ttl time.Duration) (ok bool, url string, err error) {
	if culprit == "" || owner == "" {
		return false, "", fmt.Errorf("claim the revert of %q for %q: empty commit or owner", culprit, owner)
	}
	set, err := s.rdb.SetNX(ctx, s.revertKey(culprit), revertPending+owner, ttl).Result()
	if err != nil {
		return false, "", fmt.Errorf("claim the revert of %s: %w", culprit, err)
	}
	if set {
		return true, "", nil
	}
	url, _, err = s.Reverted(ctx, culprit)
	return false, url, err
}

// ReleaseRevert gives up owner's claim on culprit after a revert that was
// not opened; a claim another owner holds, or a revert recorded, is left
// alone.
func (s *Store) ReleaseRevert(ctx context.Context, culprit, owner string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.revertKey(culprit)}, revertPending+owner).Err(); err != nil {
		return fmt.Errorf("release the revert of %s: %w", culprit, err)
	}
	return nil
}

// MarkReverted records culprit's revert pull request for good.
func (s *Store) MarkReverted(ctx context.Context, culprit, url string) error {
	if url == "" || strings.HasPrefix(url, revertPending) {
		return fmt.Errorf("mark %s reverted: bad address %q", culprit, url)
	}
	if err := s.rdb.Set(ctx, s.revertKey(culprit), url, 0).Err(); err != nil {
		return fmt.Errorf("mark %s reverted at %s: %w", culprit, url, err)
	}
	return nil
}

// Reverted is culprit's revert pull request, if one was opened.
func (s *Store) Reverted(ctx context.Context, culprit string) (url string, ok bool, err error) {
	v, err := s.rdb.Get(ctx, s.revertKey(culprit)).Result()
	if errors.Is(err, redis.Nil) || err == nil && strings.HasPrefix(v, revertPending) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the revert of %s: %w", culprit, err)
	}
	return v, true, nil
}
