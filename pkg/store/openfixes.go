package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redfix/redfix/pkg/task"
)

// OpenFixes lists the published pull requests still open, at most limit
// (all with limit <= 0), in no particular order.
func (s *Store) OpenFixes(ctx context.Context, limit int) ([]task.Fix, error) {
	var out []task.Fix
	iter := s.rdb.Scan(ctx, 0, s.key("fix", "*"), 200).Iterator()
	for iter.Next(ctx) {
		data, err := s.rdb.Get(ctx, iter.Val()).Bytes()
		if err != nil {
			continue // gone since the scan saw it
		}
		var f task.Fix
		if err := json.Unmarshal(data, &f); err != nil || f.State != task.FixOpen {
			continue
		}
		out = append(out, f)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("list the open fixes: %w", err)
	}
	return out, nil
}
