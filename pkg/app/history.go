package app

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// history writes the dashboard's time series where the events happen: the
// store's daily counters, the times from red CI to pull request, the
// recent pull requests and triage failures. A store that does not answer
// costs a log line, never the work itself.
type history struct {
	st  *store.Store
	now func() time.Time
	log *zap.Logger
}

func (h history) count(ctx context.Context, counts ...series.Count) {
	if err := h.st.Count(ctx, h.now(), counts...); err != nil {
		h.log.Warn("count for the dashboard", zap.Error(err))
	}
}

// RecordRepair keeps a settled repair: its status, the rounds the gates
// rejected (each gate of each round of each candidate), its model use, and
// for a new pull request the time from red CI to it. An outcome without a
// status (an attempt that is retried) counts its rejections alone.
func (h history) RecordRepair(ctx context.Context, t task.Task, out worker.Outcome) error {
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
		return h.st.Count(ctx, now, counts...)
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
	if err := h.st.Count(ctx, now, counts...); err != nil {
		return err
	}
	if out.Status != task.StatusPublished {
		return nil
	}
	// From when the report reached redfix, else from the task's creation.
	start := t.CreatedAt
	if at, ok, err := h.st.Reported(ctx, t.ID); err != nil {
		return err
	} else if ok {
		start = at
	}
	if !start.IsZero() {
		if err := h.st.RecordTimeToPR(ctx, now, now.Sub(start)); err != nil {
			return err
		}
	}
	return h.st.RecordPullRequest(ctx, series.PullRequest{TaskID: t.ID, Repo: series.Repo(t.Repo), URL: out.PullRequest, Title: t.Title(), At: now})
}

// triageFailed keeps a report triage settled without triaging it.
func (h history) triageFailed(ctx context.Context, sub ingest.Submission, class string, err error) {
	h.count(ctx, series.Count{Event: series.EventTriageFailed, Class: class, Repo: sub.Repo})
	f := series.TriageFailure{Submission: sub.ID, Repo: series.Repo(sub.Repo), Class: class, Reason: err.Error(), At: h.now()}
	if err := h.st.RecordTriageFailure(ctx, f); err != nil {
		h.log.Warn("record triage failure for the dashboard", zap.Error(err))
	}
}

// triageDecided counts what triage did with a failure group.
func (h history) triageDecided(ctx context.Context, sub ingest.Submission, o triage.Outcome) {
	switch o.Status {
	case task.StatusQueued:
		h.count(ctx, series.Count{Event: series.EventQueued, Repo: sub.Repo})
		if o.TaskID != "" && !sub.Received.IsZero() {
			if err := h.st.RecordReported(ctx, o.TaskID, sub.Received); err != nil {
				h.log.Warn("record the report's time for the dashboard", zap.Error(err))
			}
		}
	case task.StatusDropped:
		h.count(ctx, series.Count{Event: series.EventDropped, Class: triage.ReasonClass(o.Reason), Repo: sub.Repo})
	}
}
