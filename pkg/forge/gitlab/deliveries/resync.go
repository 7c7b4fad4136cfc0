package deliveries

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/turn"
)

// Intake stores a delivery durably.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// resyncTurn names the resync's turn.
const resyncTurn = "gitlab_resync"

// Resync finds the failed pipelines the webhook missed (GitLab does not
// send a failed delivery again by itself): each pass lists the recent
// failed pipelines of the projects the configuration names by their full
// path and stores each as a pipeline delivery of its own; the claim on a
// pipeline makes one that a webhook also brought triaged once.
type Resync struct {
	Forge *gitlab.Forge
	// Projects are the full paths to look at (patterns are skipped: they
	// name projects the resync cannot list without listing groups).
	Projects []string
	Intake   Intake
	Filter   event.Filter
	Lookback time.Duration // 24 h when 0
	Log      *zap.Logger
	// Turns, when set, makes the bot's replicas resync once per interval
	// between them (Owner is this replica).
	Turns turn.Turns
	Owner string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Pass is what one pass found.
type Pass struct {
	Pipelines int // failed pipelines stored (new ones)
	Seen      int // failed pipelines stored before
}

// Run resyncs every interval until ctx ends; the first pass starts at once.
func (r *Resync) Run(ctx context.Context, every time.Duration) error {
	turn.Every(ctx, every, r.Turns, resyncTurn, r.Owner, r.Log, r.logPass)
	return nil
}

func (r *Resync) logPass(ctx context.Context) {
	start := time.Now()
	p, err := r.Once(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.Log.Warn("resync pass failed", zap.Error(err))
	default:
		r.Log.Info("resync pass", zap.Int("new_failed_pipelines", p.Pipelines), zap.Int("known_failed_pipelines", p.Seen), zap.Duration("took", time.Since(start)))
	}
}

func (r *Resync) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Once makes one pass.
func (r *Resync) Once(ctx context.Context) (Pass, error) {
	var p Pass
	lookback := r.Lookback
	if lookback <= 0 {
		lookback = 24 * time.Hour
	}
	since := r.now().Add(-lookback)
	var errs []string
	seen := map[string]bool{}
	for _, path := range r.Projects {
		if strings.ContainsAny(path, "*?[") || seen[strings.ToLower(path)] || !r.Filter.Allowed(path) {
			continue
		}
		seen[strings.ToLower(path)] = true
		if err := r.project(ctx, path, since, &p); err != nil {
			if ctx.Err() != nil {
				return p, ctx.Err()
			}
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return p, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return p, nil
}

// project stores the project's recent failed pipelines that the filter
// takes.
func (r *Resync) project(ctx context.Context, path string, since time.Time, p *Pass) error {
	failed, err := r.Forge.FailedPipelines(ctx, path, since)
	if err != nil {
		return err
	}
	for _, e := range failed {
		if r.Filter.SkipPipeline(e) != "" {
			continue
		}
		payload, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode pipeline %d of %s: %w", e.ObjectAttributes.ID, path, err)
		}
		key := PipelineKey(r.Forge.Host(), path, e.ObjectAttributes.ID)
		dup, err := r.Intake.Submit(ctx, ingest.Submission{ID: "resync:" + key, Kind: event.Kind, Event: event.Pipeline, Repo: r.Forge.WebURL(path), Payload: payload})
		if err != nil {
			return fmt.Errorf("store pipeline %d of %s: %w", e.ObjectAttributes.ID, path, err)
		}
		if dup {
			p.Seen++
			continue
		}
		p.Pipelines++
		r.Log.Info("resync found a failed pipeline", zap.String("project", path), zap.Int64("pipeline", e.ObjectAttributes.ID))
	}
	return nil
}
