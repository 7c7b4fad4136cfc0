package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/task"
)

// What people asked of redfix on its pull requests: the revisions each pull request
// got (bounded per pull request), the retries of each failure group, and
// every command acted on.

func (s *Store) revisionsKey() string           { return s.key("revisions") }
func (s *Store) retriesKey(fp string) string    { return s.key("retries", fp) }
func (s *Store) commandsKey(repo string) string { return s.key("commands", strings.ToLower(repo)) }

// maxCommandLog bounds each repository's log of commands.
const maxCommandLog = 1000

// claimRevision counts one more revision of a pull request, unless it has
// had ARGV[2] already: it returns the count and 1, or the count and 0.
var claimRevision = redis.NewScript(`
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if n >= tonumber(ARGV[2]) then return {n, 0} end
n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return {n, 1}
`)

// ClaimRevision counts one more revision of pull request number of repo
// ("owner/name") when it has had fewer than max: n is then this
// revision's number (1 for the first) and ok true. Past the bound, n is
// the count so far and ok false.
func (s *Store) ClaimRevision(ctx context.Context, repo string, number, max int) (n int, ok bool, err error) {
	res, err := claimRevision.Run(ctx, s.rdb, []string{s.revisionsKey()}, FixKey(repo, number), max).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("count a revision of %s#%d: %w", repo, number, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("count a revision of %s#%d: unexpected answer %v", repo, number, res)
	}
	n, ok = int(res[0]), res[1] == 1
	if ok && n == 1 {
		// From its first revision on, the pull request counts among the
		// revised ones in the land rates too.
		if err := s.MarkRevised(ctx, repo, number); err != nil && !errors.Is(err, task.ErrNoFix) {
			return n, ok, fmt.Errorf("count a revision of %s#%d: %w", repo, number, err)
		}
	}
	return n, ok, nil
}

// Revisions is how many revisions pull request number of repo got.
func (s *Store) Revisions(ctx context.Context, repo string, number int) (int, error) {
	n, err := s.rdb.HGet(ctx, s.revisionsKey(), FixKey(repo, number)).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the revisions of %s#%d: %w", repo, number, err)
	}
	return n, nil
}

// RevisionCounts are the revisions of every pull request that got one, by
// FixKey ("owner/name#N", lower case): what the stats count as revised.
func (s *Store) RevisionCounts(ctx context.Context) (map[string]int, error) {
	all, err := s.rdb.HGetAll(ctx, s.revisionsKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("read the revisions: %w", err)
	}
	out := make(map[string]int, len(all))
	for k, v := range all {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("read the revisions of %s: %q is not a count", k, v)
		}
		out[k] = n
	}
	return out, nil
}

// NextRetry counts one more retry of the failure group fingerprint asked
// for by a person, and returns its number (1 for the first).
func (s *Store) NextRetry(ctx context.Context, fingerprint string) (int, error) {
	n, err := s.rdb.Incr(ctx, s.retriesKey(fingerprint)).Result()
	if err != nil {
		return 0, fmt.Errorf("count a retry of group %s: %w", fingerprint, err)
	}
	return int(n), nil
}

// forgetPublished deletes the group's publication when it is still url.
var forgetPublished = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// ForgetPublished drops the record that the group was published as url,
// so that a retry may publish it again (its pull request was closed).
// A record of another pull request is kept; ok says whether it was
// dropped.
func (s *Store) ForgetPublished(ctx context.Context, fingerprint, url string) (bool, error) {
	n, err := forgetPublished.Run(ctx, s.rdb, []string{s.publishedKey(fingerprint)}, url).Int()
	if err != nil {
		return false, fmt.Errorf("forget the publication of group %s: %w", fingerprint, err)
	}
	return n == 1, nil
}

// RecordCommand adds c to its repository's log of commands (the newest
// maxCommandLog are kept).
func (s *Store) RecordCommand(ctx context.Context, c task.Command) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	key := s.commandsKey(c.Repo)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, data)
		p.LTrim(ctx, key, 0, maxCommandLog-1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record command %s on %s#%d: %w", c.Verb, c.Repo, c.Number, err)
	}
	return nil
}

// Commands are repo's commands, newest first, at most limit.
func (s *Store) Commands(ctx context.Context, repo string, limit int) ([]task.Command, error) {
	raw, err := s.rdb.LRange(ctx, s.commandsKey(repo), 0, int64(max(limit, 1))-1).Result()
	if err != nil {
		return nil, fmt.Errorf("read the commands of %s: %w", repo, err)
	}
	out := make([]task.Command, 0, len(raw))
	for _, r := range raw {
		var c task.Command
		if err := json.Unmarshal([]byte(r), &c); err != nil {
			return nil, fmt.Errorf("read the commands of %s: %w", repo, err)
		}
		out = append(out, c)
	}
	return out, nil
}
