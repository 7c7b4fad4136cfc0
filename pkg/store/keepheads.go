package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

func (s *Store) keptHeadKey(repo string, number int) string {
	return s.key("kept_head", FixKey(repo, number))
}

// KeptHead is the default branch's head at which the pass over the open
// pull requests (pkg/keep) last found pull request number of repo still
// needed: its failing tests still failed there. "" when none is
// remembered.
func (s *Store) KeptHead(ctx context.Context, repo string, number int) (string, error) {
	head, err := s.rdb.Get(ctx, s.keptHeadKey(repo, number)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the kept head of %s#%d: %w", repo, number, err)
	}
	return head, nil
}

// SetKeptHead remembers head as KeptHead for ttl.
func (s *Store) SetKeptHead(ctx context.Context, repo string, number int, head string, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.keptHeadKey(repo, number), head, ttl).Err(); err != nil {
		return fmt.Errorf("remember the kept head of %s#%d: %w", repo, number, err)
	}
	return nil
}
