package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// budgetTTL is how long a day's job counter is kept: past the day, for
// the dashboard's "today" and for a clock a little behind.
const budgetTTL = 48 * time.Hour

// takeJobScript counts one job in KEYS[1] unless ARGV[1] are counted
// already; it returns {taken (1 or 0), the count after}.
var takeJobScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, n}
`)

// budgetKey is the counter of repo's jobs on the UTC day of day.
func (s *Store) budgetKey(repo string, day time.Time) string {
	return s.key("jobs_per_day", day.UTC().Format("20060102"), repo)
}

// TakeDailyJob counts one job for repo on day's UTC date, unless limit jobs
// are counted there already; used is the count after.
func (s *Store) TakeDailyJob(ctx context.Context, repo string, day time.Time, limit int) (taken bool, used int, err error) {
	v, err := takeJobScript.Run(ctx, s.rdb, []string{s.budgetKey(repo, day)}, limit, budgetTTL.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("take a job of %s's daily budget: %w", repo, err)
	}
	return v[0] == 1, int(v[1]), nil
}

// ReturnDailyJob gives back a job taken on day that was not queued after
// all.
func (s *Store) ReturnDailyJob(ctx context.Context, repo string, day time.Time) error {
	key := s.budgetKey(repo, day)
	if err := s.rdb.Eval(ctx, `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then return redis.call('DECR', KEYS[1]) end return 0`, []string{key}).Err(); err != nil {
		return fmt.Errorf("return a job to %s's daily budget: %w", repo, err)
	}
	return nil
}

// DailyJobs is how many jobs are counted for repo on day's UTC date.
func (s *Store) DailyJobs(ctx context.Context, repo string, day time.Time) (int, error) {
	n, err := s.rdb.Get(ctx, s.budgetKey(repo, day)).Int()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s's jobs of the day: %w", repo, err)
	}
	return n, nil
}
