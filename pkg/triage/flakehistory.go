package triage

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// Quarantine keeps the flaky failures triage recorded, with their
// evidence, for the quarantine report; store.Store satisfies it.
type Quarantine interface {
	Quarantine(ctx context.Context, e task.QuarantineEntry) error
}

// FlakeScore sums a test's history by commit.
type FlakeScore struct {
	Commits int `json:"commits"` // commits where it ran
	// FlakyCommits are those where it both passed and failed: flaky by
	// definition.
	FlakyCommits int `json:"flaky_commits"`
	Runs         int `json:"runs"`
	Failures     int `json:"failures"`
	// Rate is the share of failed runs at commits where the test passed at
	// least once (where it was not broken), 0..1.
	Rate float64 `json:"rate"`
}

// Flaky says the test both passed and failed at one commit.
func (s FlakeScore) Flaky() bool { return s.FlakyCommits > 0 }

// Score sums a history by commit.
func Score(history map[string]task.CommitRuns) FlakeScore {
	var s FlakeScore
	var healthyRuns, healthyFails int
	for _, c := range history {
		if c.Passed+c.Failed == 0 {
			continue
		}
		s.Commits++
		s.Runs += c.Passed + c.Failed
		s.Failures += c.Failed
		if c.Flaky() {
			s.FlakyCommits++
		}
		if c.Passed > 0 {
			healthyRuns += c.Passed + c.Failed
			healthyFails += c.Failed
		}
	}
	if healthyRuns > 0 {
		s.Rate = round3(float64(healthyFails) / float64(healthyRuns))
	}
	return s
}

// AdaptiveReruns is how many times to re-run a failing test at one commit
// given its history. With no history, base. A test never seen flaky over
// many runs needs fewer (a reliable failure shows at once). A flaky one
// needs enough that a flaky failure would pass at least once, 99 times in
// 100: runs ≥ log(0.01)/log(P(fail)), between base and four times base.
func AdaptiveReruns(base int, s FlakeScore) int {
	base = max(1, base)
	switch {
	case s.Runs == 0:
		return base
	case !s.Flaky() && s.Runs >= 20:
		return max(2, base/2)
	case !s.Flaky():
		return base
	}
	// The chance that a flaky run fails, from the flaky commits' runs.
	p := math.Min(0.95, math.Max(s.Rate, 0.05))
	n := int(math.Ceil(math.Log(0.01) / math.Log(p)))
	return min(max(n, base), 4*base)
}

// RunCache keeps the tests' runs by commit, the history that says how
// flaky a test is; store.Store satisfies it. The bisection keeps its runs
// there too: it is a bisect.RunCache.
type RunCache interface {
	CommitRuns(ctx context.Context, testID string) (map[string]task.CommitRuns, error)
	AddCommitRuns(ctx context.Context, testID, commit string, runs task.CommitRuns) error
}

// testHistory is what the history by commit says about a group's tests.
type testHistory struct {
	score   FlakeScore
	reruns  int
	byTest  map[string]map[string]task.CommitRuns
	enabled bool
}

// history reads the tests' history by commit when the store keeps one.
// History is advice: a store error is logged and the defaults are used.
func (p *process) history(ctx context.Context, ids []string, log *zap.Logger) testHistory {
	h := testHistory{reruns: p.t.cfg.Reruns, byTest: map[string]map[string]task.CommitRuns{}}
	c, ok := p.t.store.(RunCache)
	if !ok {
		return h
	}
	h.enabled = true
	all := map[string]task.CommitRuns{}
	for _, id := range ids {
		runs, err := c.CommitRuns(ctx, id)
		if err != nil {
			log.Warn("read history by commit", zap.String("test", id), zap.Error(err))
			continue
		}
		h.byTest[id] = runs
		for sha, r := range runs {
			all[sha] = all[sha].Add(r)
		}
	}
	h.score = Score(all)
	h.reruns = AdaptiveReruns(p.t.cfg.Reruns, h.score)
	return h
}

// keepReruns adds the re-runs at commit to the tests' history by commit,
// and says whether a test has now both passed and failed there.
func (p *process) keepReruns(ctx context.Context, h testHistory, commit string, rep Reproduction) (flakyHere bool, err error) {
	c, ok := p.t.store.(RunCache)
	if !ok {
		return false, nil
	}
	for _, ev := range rep.Tests {
		runs := task.CommitRuns{Passed: ev.Runs - ev.Failures, Failed: ev.Failures}
		if err := c.AddCommitRuns(ctx, ev.Test, commit, runs); err != nil {
			return false, fmt.Errorf("keep re-runs of %s: %w", ev.Test, err)
		}
		if h.byTest[ev.Test][commit].Add(runs).Flaky() {
			flakyHere = true
		}
	}
	return flakyHere, nil
}

// quarantine records a flaky failure with its evidence, when the store
// keeps a quarantine.
func (p *process) quarantine(ctx context.Context, tk task.Task, rep Reproduction, h testHistory, reason string) error {
	q, ok := p.t.store.(Quarantine)
	if !ok {
		return nil
	}
	for _, ev := range rep.Tests {
		if ev.Failures == 0 && !slices.ContainsFunc(tk.Failures, func(f task.Failure) bool { return f.ID() == ev.Test }) {
			continue
		}
		e := task.QuarantineEntry{
			Test:         ev.Test,
			Repo:         tk.Repo,
			Commit:       tk.Commit,
			Fingerprint:  tk.Fingerprint,
			TaskID:       tk.ID,
			Runs:         ev.Runs,
			Failures:     ev.Failures,
			FlakeRate:    h.score.Rate,
			FlakyCommits: h.score.FlakyCommits,
			Reason:       reason,
			SeenAt:       p.t.now().UTC().Truncate(time.Second),
		}
		if ev.Failure != nil {
			e.Message = ev.Failure.Message
		}
		if err := q.Quarantine(ctx, e); err != nil {
			return fmt.Errorf("quarantine %s: %w", ev.Test, err)
		}
	}
	return nil
}

// record adds the reruns to the tests' history and describes that history.
func (p *process) record(ctx context.Context, rep Reproduction) (string, error) {
	var parts []string
	for _, ev := range rep.Tests {
		for i := 0; i < ev.Runs; i++ {
			if err := p.t.store.RecordRun(ctx, ev.Test, i < ev.Failures); err != nil {
				return "", fmt.Errorf("record run of %s: %w", ev.Test, err)
			}
		}
		runs, failures, err := p.t.store.TestHistory(ctx, ev.Test)
		if err != nil {
			return "", fmt.Errorf("history of %s: %w", ev.Test, err)
		}
		parts = append(parts, fmt.Sprintf("%d/%d recorded runs failed", failures, runs))
	}
	return "history: " + strings.Join(parts, ", "), nil
}
