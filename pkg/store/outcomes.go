package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/task"
)

// The counters kept per repository.
const (
	cPublished        = "published"
	cLanded           = "landed"
	cLandedWithEdits  = "landed_with_edits"
	cClosed           = "closed_unmerged"
	cClosedByBot      = "closed_by_bot"
	cReviewed         = "reviewed"
	cChangesRequested = "changes_requested"
	cReviewSeconds    = "review_seconds"
	cLandSeconds      = "land_seconds"
)

// FixKey names a pull request: "owner/name#number", lower case.
func FixKey(repo string, number int) string {
	return strings.ToLower(repo) + "#" + strconv.Itoa(number)
}

// landCounts are the counters of the fixes of one repository, or of all,
// with the sums behind the mean times.
type landCounts struct {
	task.LandStats
	reviewSeconds, landSeconds int64
}

func (s *landCounts) add(o landCounts) {
	s.Published += o.Published
	s.Landed += o.Landed
	s.LandedWithEdits += o.LandedWithEdits
	s.ClosedUnmerged += o.ClosedUnmerged
	s.ClosedByBot += o.ClosedByBot
	s.Reviewed += o.Reviewed
	s.ChangesRequested += o.ChangesRequested
	s.reviewSeconds += o.reviewSeconds
	s.landSeconds += o.landSeconds
}

// finish is the stats the counters give: the open ones, the land rate and
// the mean times.
func (s landCounts) finish() task.LandStats {
	st := s.LandStats
	st.Open = st.Published - st.Landed - st.ClosedUnmerged
	if decided := st.Landed + st.ClosedUnmerged; decided > 0 {
		r := float64(st.Landed) / float64(decided)
		st.LandRate = &r
	}
	if st.Reviewed > 0 {
		st.MeanSecondsToFirstReview = float64(s.reviewSeconds) / float64(st.Reviewed)
	}
	if st.Landed > 0 {
		st.MeanSecondsToLand = float64(s.landSeconds) / float64(st.Landed)
	}
	return st
}

func (s *Store) fixKey(repo string, number int) string { return s.key("fix", FixKey(repo, number)) }
func (s *Store) fixReposKey() string                   { return s.key("fix_repos") }
func (s *Store) fixStatsKey(repo string) string        { return s.key("fix_stats", strings.ToLower(repo)) }

// RecordPublished records a newly published fix as open. It reports false,
// changing nothing, when the pull request was recorded before.
func (s *Store) RecordPublished(ctx context.Context, f task.Fix) (bool, error) {
	if f.Repo == "" || f.Number <= 0 {
		return false, fmt.Errorf("record published fix %s#%d: no repository or number", f.Repo, f.Number)
	}
	if f.PublishedAt.IsZero() {
		f.PublishedAt = time.Now().UTC()
	}
	f.State = task.FixOpen
	created := false
	err := s.updateFix(ctx, f.Repo, f.Number, func(cur *task.Fix) (*task.Fix, map[string]int64, error) {
		if cur != nil {
			return nil, nil, nil
		}
		created = true
		return &f, map[string]int64{cPublished: 1}, nil
	})
	if err != nil {
		return false, fmt.Errorf("record published fix %s#%d: %w", f.Repo, f.Number, err)
	}
	return created, nil
}

// RecordReview records a review of a published fix: state is the review's
// ("approved", "changes_requested", "commented"). The first review sets the
// time to first review; later ones only add a request for changes.
func (s *Store) RecordReview(ctx context.Context, repo string, number int, state string, at time.Time) (task.Fix, error) {
	var out task.Fix
	err := s.updateFix(ctx, repo, number, func(cur *task.Fix) (*task.Fix, map[string]int64, error) {
		if cur == nil {
			return nil, nil, task.ErrNoFix
		}
		f, d := *cur, map[string]int64{}
		if !f.Reviewed {
			f.Reviewed, f.FirstReviewAt = true, at.UTC()
			d[cReviewed] = 1
			d[cReviewSeconds] = max(0, int64(at.Sub(f.PublishedAt).Seconds()))
		}
		if strings.EqualFold(state, "changes_requested") && !f.ChangesRequested {
			f.ChangesRequested = true
			d[cChangesRequested] = 1
		}
		out = f
		if len(d) == 0 {
			return nil, nil, nil
		}
		return &f, d, nil
	})
	if err != nil {
		return task.Fix{}, fmt.Errorf("record review of %s#%d: %w", repo, number, err)
	}
	return out, nil
}

// RecordClosed records that a published fix was closed: merged (landed,
// with edits when a human pushed to its branch first) or not. Closing a
// closed fix again changes nothing.
func (s *Store) RecordClosed(ctx context.Context, repo string, number int, merged, edited bool, at time.Time) (task.Fix, error) {
	var out task.Fix
	err := s.updateFix(ctx, repo, number, func(cur *task.Fix) (*task.Fix, map[string]int64, error) {
		if cur == nil {
			return nil, nil, task.ErrNoFix
		}
		f := *cur
		out = f
		if f.State != task.FixOpen {
			return nil, nil, nil
		}
		d := map[string]int64{}
		f.ClosedAt = at.UTC()
		switch {
		case merged && edited:
			f.State = task.FixLandedWithEdits
			d[cLanded], d[cLandedWithEdits] = 1, 1
		case merged:
			f.State = task.FixLanded
			d[cLanded] = 1
		default:
			f.State = task.FixClosed
			d[cClosed] = 1
		}
		if merged {
			d[cLandSeconds] = max(0, int64(at.Sub(f.PublishedAt).Seconds()))
		}
		out = f
		return &f, d, nil
	})
	if err != nil {
		return task.Fix{}, fmt.Errorf("record closing of %s#%d: %w", repo, number, err)
	}
	return out, nil
}

// RecordClosedByBot records that redfix closed a published fix itself,
// for reason: closed unmerged, and counted among those closed by the bot.
// The closing's webhook may have recorded it closed first: the reason is
// then added to that record. Recording it again changes nothing.
func (s *Store) RecordClosedByBot(ctx context.Context, repo string, number int, reason task.CloseReason, at time.Time) (task.Fix, error) {
	var out task.Fix
	err := s.updateFix(ctx, repo, number, func(cur *task.Fix) (*task.Fix, map[string]int64, error) {
		if cur == nil {
			return nil, nil, task.ErrNoFix
		}
		f := *cur
		out = f
		if f.State != task.FixOpen && (f.State != task.FixClosed || f.ClosedByBot != "") {
			return nil, nil, nil // landed, or recorded already
		}
		d := map[string]int64{cClosedByBot: 1}
		if f.State == task.FixOpen {
			f.State, f.ClosedAt = task.FixClosed, at.UTC()
			d[cClosed] = 1
		}
		f.ClosedByBot = reason
		out = f
		return &f, d, nil
	})
	if err != nil {
		return task.Fix{}, fmt.Errorf("record %s#%d closed by redfix: %w", repo, number, err)
	}
	return out, nil
}

// RecordReopened puts a fix that was closed unmerged back to open (no
// longer counted as closed, by the bot or otherwise).
func (s *Store) RecordReopened(ctx context.Context, repo string, number int) (task.Fix, error) {
	var out task.Fix
	err := s.updateFix(ctx, repo, number, func(cur *task.Fix) (*task.Fix, map[string]int64, error) {
		if cur == nil {
			return nil, nil, task.ErrNoFix
		}
		f := *cur
		out = f
		if f.State != task.FixClosed {
			return nil, nil, nil
		}
		d := map[string]int64{cClosed: -1}
		if f.ClosedByBot != "" {
			d[cClosedByBot] = -1
		}
		f.State, f.ClosedAt, f.ClosedByBot = task.FixOpen, time.Time{}, ""
		out = f
		return &f, d, nil
	})
	if err != nil {
		return task.Fix{}, fmt.Errorf("record reopening of %s#%d: %w", repo, number, err)
	}
	return out, nil
}

// GetFix reads a published fix; task.ErrNoFix when there is none.
func (s *Store) GetFix(ctx context.Context, repo string, number int) (task.Fix, error) {
	data, err := s.rdb.Get(ctx, s.fixKey(repo, number)).Bytes()
	if errors.Is(err, redis.Nil) {
		return task.Fix{}, fmt.Errorf("get fix %s#%d: %w", repo, number, task.ErrNoFix)
	}
	if err != nil {
		return task.Fix{}, fmt.Errorf("get fix %s#%d: %w", repo, number, err)
	}
	var f task.Fix
	if err := json.Unmarshal(data, &f); err != nil {
		return task.Fix{}, fmt.Errorf("get fix %s#%d: decode: %w", repo, number, err)
	}
	return f, nil
}

// updateFix applies change to the fix in a transaction watching its key:
// the fix is rewritten and the counters moved together, or not at all. A
// nil fix from change writes nothing.
func (s *Store) updateFix(ctx context.Context, repo string, number int, change func(cur *task.Fix) (*task.Fix, map[string]int64, error)) error {
	key := s.fixKey(repo, number)
	txf := func(tx *redis.Tx) error {
		var cur *task.Fix
		data, err := tx.Get(ctx, key).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return fmt.Errorf("read current: %w", err)
		default:
			cur = new(task.Fix)
			if err := json.Unmarshal(data, cur); err != nil {
				return fmt.Errorf("decode current: %w", err)
			}
		}
		next, deltas, err := change(cur)
		if err != nil || next == nil {
			return err
		}
		enc, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, enc, 0)
			p.SAdd(ctx, s.fixReposKey(), next.Repo)
			for field, n := range deltas {
				p.HIncrBy(ctx, s.fixStatsKey(next.Repo), field, n)
			}
			s.countKinds(ctx, p, *next, deltas)
			// The dashboard's history: what happened to fixes, by day.
			for field, ev := range map[string]string{cLanded: series.EventLanded, cClosed: series.EventClosed, cReviewed: series.EventReviewed} {
				at := next.ClosedAt
				if field == cReviewed {
					at = next.FirstReviewAt
				}
				if deltas[field] > 0 && !at.IsZero() {
					countDaily(ctx, p, s.dailyKey(day(at)), []series.Count{{Event: ev, Repo: next.Repo}})
				}
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
		return err
	}
	return fmt.Errorf("gave up after %d conflicting concurrent updates", maxTxRetries)
}

// LandRate is the outcome of the published fixes, overall and by
// repository (sorted by name).
func (s *Store) LandRate(ctx context.Context) (task.Land, error) {
	repos, err := s.rdb.SMembers(ctx, s.fixReposKey()).Result()
	if err != nil {
		return task.Land{}, fmt.Errorf("land rate: list repositories: %w", err)
	}
	slices.Sort(repos)
	land := task.Land{Repos: make([]task.LandStats, 0, len(repos))}
	var overall landCounts
	for _, repo := range repos {
		raw, err := s.rdb.HGetAll(ctx, s.fixStatsKey(repo)).Result()
		if err != nil {
			return task.Land{}, fmt.Errorf("land rate of %s: %w", repo, err)
		}
		st := landCounts{LandStats: task.LandStats{Repo: repo}}
		if err := st.read(raw); err != nil {
			return task.Land{}, fmt.Errorf("land rate of %s: %w", repo, err)
		}
		overall.add(st)
		land.Repos = append(land.Repos, st.finish())
	}
	land.Overall = overall.finish()
	if land.Kinds, err = s.kindStats(ctx); err != nil {
		return task.Land{}, err
	}
	return land, nil
}

// read sets the counters from their hash.
func (st *landCounts) read(raw map[string]string) error {
	for field, v := range raw {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s %q: %w", field, v, err)
		}
		switch field {
		case cPublished:
			st.Published = n
		case cLanded:
			st.Landed = n
		case cLandedWithEdits:
			st.LandedWithEdits = n
		case cClosed:
			st.ClosedUnmerged = n
		case cClosedByBot:
			st.ClosedByBot = n
		case cReviewed:
			st.Reviewed = n
		case cChangesRequested:
			st.ChangesRequested = n
		case cReviewSeconds:
			st.reviewSeconds = n
		case cLandSeconds:
			st.landSeconds = n
		}
	}
	return nil
}

// claimRunScript sets KEYS[1] to ARGV[1] for ARGV[2] ms unless it is set,
// and returns its holder and whether it was set now.
var claimRunScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return {cur, 0} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {ARGV[1], 1}
`)

func (s *Store) runKey(run string) string       { return s.key("github_run", run) }
func (s *Store) redeliveryKey(id string) string { return s.key("github_redelivery", id) }

// ClaimRun makes owner (a delivery) the one that triages the workflow run
// named run, for ttl. It reports false with the holder when another
// delivery claimed the run first; the owner's own redelivery gets true.
func (s *Store) ClaimRun(ctx context.Context, run, owner string, ttl time.Duration) (ok bool, holder string, err error) {
	if ttl < time.Millisecond {
		return false, "", fmt.Errorf("claim run %s: ttl %s: must be at least 1ms", run, ttl)
	}
	res, err := claimRunScript.Run(ctx, s.rdb, []string{s.runKey(run)}, owner, ttl.Milliseconds()).Slice()
	if err != nil {
		return false, "", fmt.Errorf("claim run %s for %s: %w", run, owner, err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("claim run %s for %s: unexpected reply %v", run, owner, res)
	}
	holder, _ = res[0].(string)
	return holder == owner, holder, nil
}

// ReleaseRun forgets owner's claim on run, after a triage that failed, so
// that a retry or another delivery may take it.
func (s *Store) ReleaseRun(ctx context.Context, run, owner string) error {
	if err := s.deleteOwned.Run(ctx, s.rdb, []string{s.runKey(run)}, owner).Err(); err != nil {
		return fmt.Errorf("release run %s for %s: %w", run, owner, err)
	}
	return nil
}

func (s *Store) onceKey(key string) string { return s.key("once", key) }

// FirstTime remembers key for ttl and reports whether this is the first
// time: false, remembering nothing, when key or any of the keys in unless
// is remembered already. A job that records its outcome through it does
// so once however often it is delivered.
func (s *Store) FirstTime(ctx context.Context, key string, ttl time.Duration, unless ...string) (bool, error) {
	keys := []string{s.onceKey(key)}
	for _, u := range unless {
		keys = append(keys, s.onceKey(u))
	}
	n, err := s.firstTime.Run(ctx, s.rdb, keys, time.Now().UTC().Format(time.RFC3339), ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("remember %s: %w", key, err)
	}
	return n == 1, nil
}

// FirstRedelivery reports whether this is the first request to redeliver
// the hook delivery id within ttl, and remembers it.
func (s *Store) FirstRedelivery(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, s.redeliveryKey(id), time.Now().UTC().Format(time.RFC3339), ttl).Result()
	if err != nil {
		return false, fmt.Errorf("remember redelivery of %s: %w", id, err)
	}
	return ok, nil
}
