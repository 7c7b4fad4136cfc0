package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// RecordRun adds one run of a test, failed or passed, to its history.
func (s *Store) RecordRun(ctx context.Context, testID string, failed bool) error {
	key := s.historyKey(testID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, key, "runs", 1)
		if failed {
			p.HIncrBy(ctx, key, "failures", 1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record run of %s: %w", testID, err)
	}
	return nil
}

// TestHistory is how many runs of a test were recorded and how many failed.
func (s *Store) TestHistory(ctx context.Context, testID string) (runs, failures int, err error) {
	vals, err := s.rdb.HMGet(ctx, s.historyKey(testID), "runs", "failures").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("read history of %s: %w", testID, err)
	}
	nums := [2]int{}
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		if nums[i], err = strconv.Atoi(str); err != nil {
			return 0, 0, fmt.Errorf("read history of %s: %q: %w", testID, str, err)
		}
	}
	return nums[0], nums[1], nil
}
