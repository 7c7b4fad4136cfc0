package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// kinds are the kinds of pull request counted apart, in the order the
// stats list them.
var kinds = []string{task.KindFix, task.KindRevert, task.KindRevised}

func (s *Store) fixKindStatsKey(kind string) string { return s.key("fix_kind_stats", kind) }

// countKinds moves the counters of f's kinds by deltas, in the
// transaction that moves its repository's: its own kind, and the revised
// fixes' when f was revised.
func (s *Store) countKinds(ctx context.Context, p redis.Pipeliner, f task.Fix, deltas map[string]int64) {
	for _, k := range kindsOf(f) {
		for field, n := range deltas {
			p.HIncrBy(ctx, s.fixKindStatsKey(k), field, n)
		}
	}
}

// kindsOf are the kinds f counts for.
func kindsOf(f task.Fix) []string {
	if f.Revised {
		return []string{f.KindOf(), task.KindRevised}
	}
	return []string{f.KindOf()}
}

// kindStats are the counters of each kind of pull request, every kind
// listed (with zeros before the first of its kind).
func (s *Store) kindStats(ctx context.Context) ([]task.LandStats, error) {
	out := make([]task.LandStats, 0, len(kinds))
	for _, k := range kinds {
		raw, err := s.rdb.HGetAll(ctx, s.fixKindStatsKey(k)).Result()
		if err != nil {
			return nil, fmt.Errorf("land rate of the %s pull requests: %w", k, err)
		}
		st := landCounts{LandStats: task.LandStats{Kind: k}}
		if err := st.read(raw); err != nil {
			return nil, fmt.Errorf("land rate of the %s pull requests: %w", k, err)
		}
		out = append(out, st.finish())
	}
	return out, nil
}

// MarkRevised records that a published pull request got its first
// revision on review: from now on it counts among the revised ones too
// (published now; its review and outcome when they come). Marking it again
// changes nothing. The revisions themselves are counted where they are
// made.
func (s *Store) MarkRevised(ctx context.Context, repo string, number int) error {
	key := s.fixKey(repo, number)
	txf := func(tx *redis.Tx) error {
		f, err := s.GetFix(ctx, repo, number)
		if err != nil {
			return err
		}
		if f.Revised {
			return nil
		}
		f.Revised = true
		enc, err := json.Marshal(f)
		if err != nil {
			return err
		}
		d := map[string]int64{cPublished: 1}
		if f.Reviewed {
			d[cReviewed] = 1
		}
		if f.ChangesRequested {
			d[cChangesRequested] = 1
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, enc, 0)
			for field, n := range d {
				p.HIncrBy(ctx, s.fixKindStatsKey(task.KindRevised), field, n)
			}
			return nil
		})
		return err
	}
	for range maxTxRetries {
		err := s.rdb.Watch(ctx, txf, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		if err != nil {
			return fmt.Errorf("mark %s#%d revised: %w", repo, number, err)
		}
		return nil
	}
	return fmt.Errorf("mark %s#%d revised: gave up after %d conflicting concurrent updates", repo, number, maxTxRetries)
}
