package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// CommitRunsTTL is how long a test's runs by commit are kept after the last
// one was added.
const CommitRunsTTL = 90 * 24 * time.Hour

// The hash fields of one commit's counts: "SHA:p", "SHA:f", "SHA:m", "SHA:s".
var commitRunFields = [...]string{"p", "f", "m", "s"}

func (s *Store) commitRunsKey(testID string) string { return s.key("commit_runs", testID) }

// AddCommitRuns adds runs of a test at a commit to its history by commit.
func (s *Store) AddCommitRuns(ctx context.Context, testID, commit string, r task.CommitRuns) error {
	key := s.commitRunsKey(testID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range [...]int{r.Passed, r.Failed, r.Missing, r.Skipped} {
			if n != 0 {
				p.HIncrBy(ctx, key, commit+":"+commitRunFields[i], int64(n))
			}
		}
		p.Expire(ctx, key, CommitRunsTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("add runs of %s at %s: %w", testID, commit, err)
	}
	return nil
}

// CommitRuns is a test's history by commit: its runs at each commit where
// it was run.
func (s *Store) CommitRuns(ctx context.Context, testID string) (map[string]task.CommitRuns, error) {
	vals, err := s.rdb.HGetAll(ctx, s.commitRunsKey(testID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read runs of %s by commit: %w", testID, err)
	}
	out := make(map[string]task.CommitRuns, len(vals)/2)
	for field, v := range vals {
		commit, kind, ok := strings.Cut(field, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("read runs of %s at %s: %q: %w", testID, commit, v, err)
		}
		c := out[commit]
		switch kind {
		case "p":
			c.Passed = n
		case "f":
			c.Failed = n
		case "m":
			c.Missing = n
		case "s":
			c.Skipped = n
		default:
			continue
		}
		out[commit] = c
	}
	return out, nil
}
