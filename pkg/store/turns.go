package store

import (
	"context"
	"fmt"
	"time"
)

// turnKey holds the process whose turn it is to do the named periodic
// work.
func (s *Store) turnKey(work string) string { return s.key("turn", work) }

// TakeTurn makes owner the one process that does the named periodic work
// (a forge's resync, say) for the next interval: it reports false when
// another process took the turn within the last interval. The turn is not
// given back, so that the bot's replicas do the work once per interval
// between them; when the holder dies the turn lapses with the interval and
// the next replica to ask takes it. Work done by turns must be idempotent:
// a turn is not a fence (a holder paused past its interval may still be
// working when the next one starts).
func (s *Store) TakeTurn(ctx context.Context, work, owner string, interval time.Duration) (bool, error) {
	if work == "" || owner == "" {
		return false, fmt.Errorf("take the turn of %q for %q: empty work or owner", work, owner)
	}
	if interval < time.Millisecond {
		return false, fmt.Errorf("take the turn of %s: interval %s: must be at least 1ms", work, interval)
	}
	ok, err := s.rdb.SetNX(ctx, s.turnKey(work), owner, interval).Result()
	if err != nil {
		return false, fmt.Errorf("take the turn of %s for %s: %w", work, owner, err)
	}
	return ok, nil
}
