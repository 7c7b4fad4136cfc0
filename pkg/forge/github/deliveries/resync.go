package deliveries

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/turn"
)

// Intake stores a delivery durably.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// Redeliveries remembers which failed deliveries redfix asked GitHub to
// redeliver, so that it asks once.
type Redeliveries interface {
	FirstRedelivery(ctx context.Context, id string, ttl time.Duration) (bool, error)
}

// resyncTurn names the resync's turn.
const resyncTurn = "github_resync"

// Resync finds what the webhooks missed: GitHub does not redeliver a
// failed delivery by itself. Each pass lists the recent failed runs of the
// installed repositories and stores them as workflow_run deliveries of its
// own (the run claim makes a run that a webhook also brought triaged
// once), and asks GitHub to redeliver the App's failed deliveries.
type Resync struct {
	// Forge is the GitHub to look at: the repositories of the App's
	// installations, or those Names names for a token (which has no
	// installations, nor App hook deliveries to look at).
	Forge    *github.Forge
	Names    []string
	Intake   Intake
	Asked    Redeliveries
	Filter   event.Filter
	Lookback time.Duration // 24 h when 0
	Log      *zap.Logger
	// Turns, when set, makes the bot's replicas resync once per interval
	// between them: a pass runs only in the replica (Owner) that takes the
	// interval's turn.
	Turns turn.Turns
	Owner string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Pass is what one pass found.
type Pass struct {
	Runs        int // failed runs stored (new ones)
	Seen        int // failed runs stored before
	Redelivered int // failed deliveries GitHub was asked to redeliver
}

// Run resyncs every interval until ctx ends; the first pass starts at once.
// A failed pass is logged and the next one tries again.
func (r *Resync) Run(ctx context.Context, every time.Duration) error {
	turn.Every(ctx, every, r.Turns, resyncTurn, r.Owner, r.Log, r.logPass)
	return nil
}

// logPass makes one pass and logs what it found.
func (r *Resync) logPass(ctx context.Context) {
	start := time.Now()
	p, err := r.Once(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.Log.Warn("resync pass failed", zap.Error(err))
	default:
		r.Log.Info("resync pass", zap.Int("new_failed_runs", p.Runs), zap.Int("known_failed_runs", p.Seen),
			zap.Int("redelivered", p.Redelivered), zap.Duration("took", time.Since(start)))
	}
}

func (r *Resync) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Resync) lookback() time.Duration {
	if r.Lookback > 0 {
		return r.Lookback
	}
	return 24 * time.Hour
}

// Once makes one pass.
func (r *Resync) Once(ctx context.Context) (Pass, error) {
	var p Pass
	repos, err := r.Forge.Clients().Repositories(ctx, r.Names)
	if err != nil {
		return p, fmt.Errorf("list repositories: %w", err)
	}
	var errs []string
	for _, repo := range repos {
		if !r.Filter.Allowed(repo.GetFullName()) {
			continue
		}
		if err := r.runs(ctx, repo, &p); err != nil {
			if ctx.Err() != nil {
				return p, ctx.Err()
			}
			errs = append(errs, err.Error())
		}
	}
	if app := r.Forge.Clients().App(); app != nil {
		if err := r.deliveries(ctx, app, &p); err != nil {
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

// runs stores the repository's recent failed runs.
func (r *Resync) runs(ctx context.Context, repo *gogithub.Repository, p *Pass) error {
	full := repo.GetFullName()
	owner, name, _ := strings.Cut(full, "/")
	client, err := r.Forge.Clients().ForRepo(ctx, owner, name)
	if err != nil {
		return fmt.Errorf("client for %s: %w", full, err)
	}
	// Runs come newest first; the description of "created" admits a
	// date-time only, so the lookback is applied here.
	cutoff := r.now().Add(-r.lookback())
	opts := &gogithub.ListWorkflowRunsOptions{Status: "failure", ListOptions: gogithub.ListOptions{PerPage: 50}}
	for range maxResyncPages {
		list, resp, err := client.Actions.ListRepositoryWorkflowRuns(ctx, owner, name, opts)
		if err != nil {
			return fmt.Errorf("list failed runs of %s: %w", full, err)
		}
		old := false
		for _, run := range list.WorkflowRuns {
			if run.GetCreatedAt().Before(cutoff) {
				old = true
				continue
			}
			if r.Filter.Skip(repo, run) != "" {
				continue
			}
			payload, err := json.Marshal(gogithub.WorkflowRunEvent{Action: gogithub.String("completed"), WorkflowRun: run, Repo: repo})
			if err != nil {
				return fmt.Errorf("encode run %d of %s: %w", run.GetID(), full, err)
			}
			dup, err := r.Intake.Submit(ctx, ingest.Submission{
				ID: "resync:" + RunKey(full, run.GetID(), run.GetRunAttempt()), Kind: event.Kind,
				Event: event.WorkflowRun, Repo: full, Payload: payload,
			})
			if err != nil {
				return fmt.Errorf("store run %d of %s: %w", run.GetID(), full, err)
			}
			if dup {
				p.Seen++
			} else {
				p.Runs++
				r.Log.Info("resync found a failed run", zap.String("repo", full), zap.Int64("run", run.GetID()))
			}
		}
		if old || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return nil
}

const maxResyncPages = 10

// deliveries asks GitHub to redeliver the App's recent deliveries of the
// events redfix acts on whose every attempt failed.
func (r *Resync) deliveries(ctx context.Context, app *gogithub.Client, p *Pass) error {
	cutoff := r.now().Add(-r.lookback())
	type attempts struct {
		ok     bool
		latest *gogithub.HookDelivery
	}
	byGUID := map[string]*attempts{}
	var order []string
	opts := &gogithub.ListCursorOptions{PerPage: 100}
	for range maxResyncPages {
		ds, resp, err := app.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return fmt.Errorf("list the app's hook deliveries: %w", err)
		}
		old := false
		for _, d := range ds {
			if d.GetDeliveredAt().Before(cutoff) {
				old = true
				continue
			}
			a, ok := byGUID[d.GetGUID()]
			if !ok {
				a = &attempts{}
				byGUID[d.GetGUID()] = a
				order = append(order, d.GetGUID())
			}
			if c := d.GetStatusCode(); c >= 200 && c < 300 {
				a.ok = true
			}
			if a.latest == nil || d.GetDeliveredAt().After(a.latest.GetDeliveredAt().Time) {
				a.latest = d
			}
		}
		if old || resp.Cursor == "" {
			break
		}
		opts.Cursor = resp.Cursor
	}
	for _, guid := range order {
		a := byGUID[guid]
		if a.ok || !event.Known(a.latest.GetEvent()) || a.latest.GetEvent() == event.Ping {
			continue
		}
		first, err := r.Asked.FirstRedelivery(ctx, guid, 2*r.lookback())
		if err != nil {
			return err
		}
		if !first {
			continue
		}
		if _, _, err := app.Apps.RedeliverHookDelivery(ctx, a.latest.GetID()); err != nil {
			// go-github reports GitHub's 202 for this call as an
			// AcceptedError: the redelivery is queued.
			if _, accepted := err.(*gogithub.AcceptedError); !accepted {
				return fmt.Errorf("redeliver %s: %w", guid, err)
			}
		}
		p.Redelivered++
		r.Log.Info("asked GitHub to redeliver a failed delivery", zap.String("delivery", guid), zap.String("event", a.latest.GetEvent()),
			zap.Int("status_code", a.latest.GetStatusCode()))
	}
	return nil
}
