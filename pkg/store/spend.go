package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// spendTTL keeps a day's counter past its end, so that it can be read the
// next morning, and then lets it go.
const spendTTL = 48 * time.Hour

func (s *Store) spendKey(repo string, day time.Time) string {
	return s.key("spend", day.UTC().Format("2006-01-02"), repo)
}

// AddRepoSpend adds tokens and cost to repo's counter for the UTC day of
// at. The counter expires two days after it was last added to.
func (s *Store) AddRepoSpend(ctx context.Context, repo string, at time.Time, tokens int, costUSD float64) error {
	key := s.spendKey(repo, at)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, key, "tokens", int64(tokens))
		p.HIncrByFloat(ctx, key, "cost_usd", costUSD)
		p.Expire(ctx, key, spendTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("add the spend of %s: %w", repo, err)
	}
	return nil
}

// RepoSpend reads repo's counter for the UTC day of at (zero when nothing
// was spent).
func (s *Store) RepoSpend(ctx context.Context, repo string, at time.Time) (task.RepoSpend, error) {
	vals, err := s.rdb.HGetAll(ctx, s.spendKey(repo, at)).Result()
	if err != nil {
		return task.RepoSpend{}, fmt.Errorf("read the spend of %s: %w", repo, err)
	}
	var out task.RepoSpend
	if v := vals["tokens"]; v != "" {
		if out.Tokens, err = strconv.Atoi(v); err != nil {
			return task.RepoSpend{}, fmt.Errorf("read the spend of %s: tokens %q: %w", repo, v, err)
		}
	}
	if v := vals["cost_usd"]; v != "" {
		if out.CostUSD, err = strconv.ParseFloat(v, 64); err != nil {
			return task.RepoSpend{}, fmt.Errorf("read the spend of %s: cost %q: %w", repo, v, err)
		}
	}
	return out, nil
}
