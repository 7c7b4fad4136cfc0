package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/redfix/redfix/pkg/task"
)

func (s *Store) quarantineKey() string { return s.key("quarantine") }

// Quarantine records a flaky test with its evidence, replacing what was
// recorded for the same test and repository before.
func (s *Store) Quarantine(ctx context.Context, e task.QuarantineEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("quarantine %s: %w", e.Test, err)
	}
	if err := s.rdb.HSet(ctx, s.quarantineKey(), e.Repo+"\x00"+e.Test, data).Err(); err != nil {
		return fmt.Errorf("quarantine %s: %w", e.Test, err)
	}
	return nil
}

// Quarantined lists the flaky tests, the most recently seen first, at
// most limit (DefaultListLimit when limit <= 0).
func (s *Store) Quarantined(ctx context.Context, limit int) ([]task.QuarantineEntry, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	vals, err := s.rdb.HGetAll(ctx, s.quarantineKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	out := make([]task.QuarantineEntry, 0, len(vals))
	for field, v := range vals {
		var e task.QuarantineEntry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			return nil, fmt.Errorf("list quarantine: entry %q: %w", field, err)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].SeenAt.Equal(out[j].SeenAt) {
			return out[i].SeenAt.After(out[j].SeenAt)
		}
		return out[i].Test < out[j].Test
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
