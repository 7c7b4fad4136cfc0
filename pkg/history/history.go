// Package history writes the dashboard's history where the events happen:
// what each outcome of the ingest, triage and repair counts in the store's
// daily counters (pkg/series), the times from red CI to pull request, the
// recent pull requests and triage failures.
package history

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// Store keeps the history (store.Store).
type Store interface {
	Count(ctx context.Context, at time.Time, counts ...series.Count) error
	RecordReported(ctx context.Context, taskID string, at time.Time) error
	Reported(ctx context.Context, taskID string) (at time.Time, ok bool, err error)
	RecordTimeToPR(ctx context.Context, at time.Time, d time.Duration) error
	RecordPullRequest(ctx context.Context, pr series.PullRequest) error
	RecordTriageFailure(ctx context.Context, f series.TriageFailure) error
}

// Recorder writes the dashboard's time series. A store that does not answer
// costs a log line, never the work itself (RecordRepair, whose caller logs,
// returns its error).
type Recorder struct {
	Store Store
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *zap.Logger
}

func (h Recorder) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

// Count counts events for the dashboard.
func (h Recorder) Count(ctx context.Context, counts ...series.Count) {
	if err := h.Store.Count(ctx, h.now(), counts...); err != nil {
		h.Log.Warn("count for the dashboard", zap.Error(err))
	}
}

// RecordRepair keeps a settled repair: its status, the rounds the gates
// rejected (each gate of each round of each candidate), its model use, and
// for a new pull request the time from red CI to it. An outcome without a
// status (an attempt that is retried) counts its rejections alone.
func (h Recorder) RecordRepair(ctx context.Context, t task.Task, out worker.Outcome) error {
	now := h.now()
	counts := []series.Count{}
	switch out.Status {
	case task.StatusPublished:
		if out.Reason == "already published" {
			return nil // a redelivery of a job whose pull request exists
		}
		counts = append(counts, series.Count{Event: series.EventPublished, Repo: t.Repo})
	case task.StatusNoPatch:
		counts = append(counts, series.Count{Event: series.EventNoPatch, Repo: t.Repo})
	case task.StatusFailed:
		counts = append(counts, series.Count{Event: series.EventFailed, Repo: t.Repo})
	case "":
	default:
		return nil
	}
	for _, g := range slices.Sorted(maps.Keys(out.Rejections)) {
		counts = append(counts, series.Count{Event: series.EventGateRejected, Class: g, Repo: t.Repo, N: int64(out.Rejections[g])})
	}
	if out.Status == "" {
		return h.Store.Count(ctx, now, counts...)
	}
	if out.Status != task.StatusFailed || out.Spend.Calls > 0 {
		counts = append(counts, series.Count{Event: series.EventRepaired, Repo: t.Repo})
		if tok := int64(out.Spend.PromptTokens + out.Spend.CompletionTokens); tok > 0 {
			counts = append(counts, series.Count{Event: series.EventTokens, Repo: t.Repo, N: tok})
		}
		if micro := int64(math.Round(out.Spend.CostUSD * 1e6)); micro > 0 {
			counts = append(counts, series.Count{Event: series.EventCostMicroUSD, Repo: t.Repo, N: micro})
		}
	}
	if err := h.Store.Count(ctx, now, counts...); err != nil {
		return err
	}
	if out.Status != task.StatusPublished {
		return nil
	}
	// From when the report reached redfix, else from the task's creation.
	start := t.CreatedAt
	if at, ok, err := h.Store.Reported(ctx, t.ID); err != nil {
		return err
	} else if ok {
		start = at
	}
	if !start.IsZero() {
		if err := h.Store.RecordTimeToPR(ctx, now, now.Sub(start)); err != nil {
			return err
		}
	}
	return h.Store.RecordPullRequest(ctx, series.PullRequest{TaskID: t.ID, Repo: series.Repo(t.Repo), URL: out.PullRequest, Title: t.Title(), At: now,
		Unreviewed: !task.Reviewed(out.Gates)})
}

// TriageFailed keeps a report triage settled without triaging it; class
// is invalid or gave_up.
func (h Recorder) TriageFailed(ctx context.Context, sub ingest.Submission, class string, err error) {
	h.Count(ctx, series.Count{Event: series.EventTriageFailed, Class: class, Repo: sub.Repo})
	f := series.TriageFailure{Submission: sub.ID, Repo: series.Repo(sub.Repo), Class: class, Reason: err.Error(), At: h.now()}
	if err := h.Store.RecordTriageFailure(ctx, f); err != nil {
		h.Log.Warn("record triage failure for the dashboard", zap.Error(err))
	}
}

// TriageDecided counts what triage did with a failure group, and keeps
// when the report of a new task arrived.
func (h Recorder) TriageDecided(ctx context.Context, sub ingest.Submission, o triage.Outcome) {
	switch o.Status {
	case task.StatusQueued:
		h.Count(ctx, series.Count{Event: series.EventQueued, Repo: sub.Repo})
		if o.TaskID != "" && !sub.Received.IsZero() {
			if err := h.Store.RecordReported(ctx, o.TaskID, sub.Received); err != nil {
				h.Log.Warn("record the report's time for the dashboard", zap.Error(err))
			}
		}
	case task.StatusDropped:
		h.Count(ctx, series.Count{Event: series.EventDropped, Class: triage.ReasonClass(o.Reason), Repo: sub.Repo})
	}
}
