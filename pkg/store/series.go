package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/series"
)

// SeriesTTL is how long the daily counters and samples are kept.
const SeriesTTL = 400 * 24 * time.Hour

// maxDailySamples bounds the red-CI-to-pull-request samples kept a day.
const maxDailySamples = 5000

// maxRecent bounds the recent pull requests and triage failures kept.
const maxRecent = 100

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func (s *Store) dailyKey(d string) string       { return s.key("daily", d) }
func (s *Store) samplesKey(d string) string     { return s.key("daily_pr_seconds", d) }
func (s *Store) recentPRsKey() string           { return s.key("recent_prs") }
func (s *Store) reportedKey(task string) string { return s.key("reported", task) }
func (s *Store) triageFailuresKey() string      { return s.key("recent_triage_failures") }

// field is a daily counter's field: event|class|repo (the repository last:
// it may hold any character).
func field(event, class, repo string) string { return event + "|" + class + "|" + repo }

// Count adds the counts to the day of at.
func (s *Store) Count(ctx context.Context, at time.Time, counts ...series.Count) error {
	if len(counts) == 0 {
		return nil
	}
	key := s.dailyKey(day(at))
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		countDaily(ctx, p, key, counts)
		return nil
	})
	if err != nil {
		return fmt.Errorf("count %s: %w", counts[0].Event, err)
	}
	return nil
}

func countDaily(ctx context.Context, p redis.Pipeliner, key string, counts []series.Count) {
	for _, c := range counts {
		n := c.N
		if n == 0 {
			n = 1
		}
		p.HIncrBy(ctx, key, field(c.Event, c.Class, series.Repo(c.Repo)), n)
	}
	p.Expire(ctx, key, SeriesTTL)
}

// Daily reads the counters of the days from from to to (UTC days, both
// included), oldest first; a day without events has no counts.
func (s *Store) Daily(ctx context.Context, from, to time.Time) ([]series.DayCounts, error) {
	var days []string
	for d := from.UTC().Truncate(24 * time.Hour); !d.After(to.UTC()); d = d.Add(24 * time.Hour) {
		days = append(days, day(d))
	}
	cmds := make([]*redis.MapStringStringCmd, len(days))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range days {
			cmds[i] = p.HGetAll(ctx, s.dailyKey(d))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read daily counters: %w", err)
	}
	out := make([]series.DayCounts, len(days))
	for i, d := range days {
		out[i].Day = d
		for f, v := range cmds[i].Val() {
			parts := strings.SplitN(f, "|", 3)
			n, err := strconv.ParseInt(v, 10, 64)
			if len(parts) != 3 || err != nil {
				continue // not ours; never fatal for a dashboard
			}
			out[i].Counts = append(out[i].Counts, series.Count{Event: parts[0], Class: parts[1], Repo: parts[2], N: n})
		}
		sort.Slice(out[i].Counts, func(a, b int) bool {
			x, y := out[i].Counts[a], out[i].Counts[b]
			return field(x.Event, x.Class, x.Repo) < field(y.Event, y.Class, y.Repo)
		})
	}
	return out, nil
}

// RecordTimeToPR keeps one sample of the time from red CI to the pull
// request, on the day the pull request was opened.
func (s *Store) RecordTimeToPR(ctx context.Context, at time.Time, d time.Duration) error {
	key := s.samplesKey(day(at))
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, strconv.FormatFloat(max(0, d.Seconds()), 'f', 3, 64))
		p.LTrim(ctx, key, -maxDailySamples, -1)
		p.Expire(ctx, key, SeriesTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record time to pull request: %w", err)
	}
	return nil
}

// TimesToPR reads the samples of the days from from to to, in seconds.
func (s *Store) TimesToPR(ctx context.Context, from, to time.Time) ([]float64, error) {
	var cmds []*redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for d := from.UTC().Truncate(24 * time.Hour); !d.After(to.UTC()); d = d.Add(24 * time.Hour) {
			cmds = append(cmds, p.LRange(ctx, s.samplesKey(day(d)), 0, -1))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read times to pull request: %w", err)
	}
	var out []float64
	for _, c := range cmds {
		for _, v := range c.Val() {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// reportedTTL bounds how long a task's report time is kept for its
// time to pull request.
const reportedTTL = 30 * 24 * time.Hour

// RecordReported keeps when the report that made a task reached redfix
// (the start of its time from red CI to pull request). The first record
// stays: a redelivered report does not move it.
func (s *Store) RecordReported(ctx context.Context, taskID string, at time.Time) error {
	if err := s.rdb.SetNX(ctx, s.reportedKey(taskID), at.UTC().Format(time.RFC3339Nano), reportedTTL).Err(); err != nil {
		return fmt.Errorf("record report time of task %s: %w", taskID, err)
	}
	return nil
}

// Reported is when the report that made a task reached redfix; ok is false
// when it was not recorded (or has expired).
func (s *Store) Reported(ctx context.Context, taskID string) (at time.Time, ok bool, err error) {
	v, err := s.rdb.Get(ctx, s.reportedKey(taskID)).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read report time of task %s: %w", taskID, err)
	}
	at, err = time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read report time of task %s: %q: %w", taskID, v, err)
	}
	return at, true, nil
}

// RecordPullRequest adds a pull request to the recent ones.
func (s *Store) RecordPullRequest(ctx context.Context, pr series.PullRequest) error {
	return s.pushRecent(ctx, s.recentPRsKey(), pr)
}

// RecentPullRequests are the last n pull requests opened, newest first.
func (s *Store) RecentPullRequests(ctx context.Context, n int) ([]series.PullRequest, error) {
	return readRecent[series.PullRequest](ctx, s, s.recentPRsKey(), n)
}

// RecordTriageFailure adds a report triage gave up on to the recent ones.
func (s *Store) RecordTriageFailure(ctx context.Context, f series.TriageFailure) error {
	if s.redactor != nil {
		f.Reason = s.redactor.String(f.Reason)
	}
	return s.pushRecent(ctx, s.triageFailuresKey(), f)
}

// RecentTriageFailures are the last n reports triage gave up on, newest
// first.
func (s *Store) RecentTriageFailures(ctx context.Context, n int) ([]series.TriageFailure, error) {
	return readRecent[series.TriageFailure](ctx, s, s.triageFailuresKey(), n)
}

func (s *Store) pushRecent(ctx context.Context, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, data)
		p.LTrim(ctx, key, 0, maxRecent-1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record in %s: %w", key, err)
	}
	return nil
}

func readRecent[T any](ctx context.Context, s *Store, key string, n int) ([]T, error) {
	if n <= 0 || n > maxRecent {
		n = maxRecent
	}
	raw, err := s.rdb.LRange(ctx, key, 0, int64(n-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	out := make([]T, 0, len(raw))
	for _, r := range raw {
		var v T
		if json.Unmarshal([]byte(r), &v) == nil {
			out = append(out, v)
		}
	}
	return out, nil
}
