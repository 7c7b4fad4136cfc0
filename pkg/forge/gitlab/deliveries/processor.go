// Package deliveries is what becomes of GitLab's webhook deliveries once
// they are stored, on the far side of the reports stream: as triage
// consumes them, the Processor turns a failed pipeline on a watched branch
// into a test report for triage, the merging and closing of redfix's own
// merge requests into their outcomes, and a /redfix note into a command.
// Resync finds the failed pipelines the webhook missed and stores them as
// deliveries of its own; the claim on a pipeline (PipelineKey) makes a
// pipeline triaged once, whichever delivery brings it.
package deliveries

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

// State is what the processor keeps: who triages each pipeline, and the
// outcomes and reviews of published fixes (store.Store).
type State interface {
	ClaimRun(ctx context.Context, run, owner string, ttl time.Duration) (ok bool, holder string, err error)
	ReleaseRun(ctx context.Context, run, owner string) error
	RecordClosed(ctx context.Context, repo string, number int, merged, edited bool, at time.Time) (task.Fix, error)
	RecordReopened(ctx context.Context, repo string, number int) (task.Fix, error)
	// RecordReview keeps a review of a published fix (the first sets its
	// time to first review; changes_requested marks it).
	RecordReview(ctx context.Context, repo string, number int, state string, at time.Time) (task.Fix, error)
	// Revisions is how many revisions redfix pushed to a merge request.
	Revisions(ctx context.Context, repo string, number int) (int, error)
}

// Commands acts on what people tell redfix in its merge requests
// (command.Handler): /redfix notes, and the threads that ask for changes.
type Commands interface {
	Comment(ctx context.Context, c forge.Comment) (note string, err error)
	Reviewed(ctx context.Context, rv forge.Review) (note string, err error)
}

// Outcomes hears of the recorded outcomes of redfix's merge requests; it
// cannot fail the delivery.
type Outcomes interface {
	Outcome(ctx context.Context, f task.Fix)
}

// ClaimTTL is how long a triaged pipeline is remembered: longer than the
// resync looks back.
const ClaimTTL = 14 * 24 * time.Hour

// Processor acts on stored deliveries, as triage consumes them
// (triage.Events).
type Processor struct {
	Filter event.Filter
	// Forge is the GitLab the deliveries come from; nil when no token is
	// configured: a pipeline's delivery is then invalid (nothing can read
	// the pipeline).
	Forge *gitlab.Forge
	State State
	// Commands, when set, acts on /redfix notes; nil drops them with a
	// log line.
	Commands Commands
	// Outcomes, when set, hears of each recorded outcome.
	Outcomes Outcomes
	Log      *zap.Logger
}

// Result is what came of one delivery.
type Result = forge.Processed

// PipelineKey names a pipeline across deliveries: "gitlab:HOST/PATH/ID".
func PipelineKey(host, project string, id int64) string {
	return fmt.Sprintf("gitlab:%s/%s/%d", strings.ToLower(host), strings.ToLower(project), id)
}

// ErrNoToken is why a pipeline cannot be read: no token is configured.
var ErrNoToken = errors.New("no GitLab token is configured (REDFIX_GITLAB_TOKEN)")

// Process handles one stored GitLab delivery. Errors are retried by the
// intake; ingest.ErrInvalid ones drop the delivery.
func (p *Processor) Process(ctx context.Context, sub ingest.Submission) (Result, error) {
	d, err := event.Decode(sub.Event, sub.Payload)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ingest.ErrInvalid, err)
	}
	log := p.Log.With(zap.String("delivery", sub.ID), zap.String("event", sub.Event), zap.String("project", d.Project))
	if skip := d.Skip(p.Filter); skip != "" {
		log.Info("delivery ignored", zap.String("reason", skip))
		return Result{Note: "ignored: " + skip}, nil
	}
	if p.Forge == nil {
		return Result{}, fmt.Errorf("%w: %w", ingest.ErrInvalid, ErrNoToken)
	}
	switch {
	case d.Pipeline != nil:
		return p.pipeline(ctx, log, sub, d)
	case d.MR != nil:
		return p.mergeRequest(ctx, log, d)
	case d.Note != nil:
		return p.note(ctx, log, d)
	}
	return Result{}, fmt.Errorf("%w: event %s has no handler", ingest.ErrInvalid, sub.Event)
}

func (p *Processor) pipeline(ctx context.Context, log *zap.Logger, sub ingest.Submission, d event.Delivery) (Result, error) {
	a := d.Pipeline.ObjectAttributes
	key := PipelineKey(p.Forge.Host(), d.Project, a.ID)
	log = log.With(zap.Int64("pipeline", a.ID), zap.String("commit", a.SHA))
	fork, branch, err := p.source(ctx, d)
	if err != nil {
		return Result{}, fmt.Errorf("pipeline %d of %s: %w", a.ID, d.Project, err)
	}
	ok, holder, err := p.State.ClaimRun(ctx, key, sub.ID, ClaimTTL)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		log.Info("pipeline already triaged from another delivery", zap.String("holder", holder))
		return Result{Note: "pipeline already triaged from delivery " + holder}, nil
	}
	release := func(ctx context.Context) {
		if err := p.State.ReleaseRun(ctx, key, sub.ID); err != nil {
			log.Warn("release the pipeline's claim", zap.Error(err))
		}
	}
	rep, err := p.Forge.PipelineReport(ctx, d.Project, a.ID, a.Ref)
	if errors.Is(err, gitlab.ErrNoReport) {
		// Nothing for triage: the pipeline failed outside the tests. The
		// claim is kept, so that a delivery sent again reads nothing again.
		log.Info("failed pipeline without a test report", zap.Strings("failed_jobs", rep.FailedJobs))
		return Result{Note: fmt.Sprintf("no test report in pipeline %d (failed jobs: %s)", a.ID, strings.Join(rep.FailedJobs, ", "))}, nil
	}
	if err != nil {
		release(context.WithoutCancel(ctx))
		return Result{}, fmt.Errorf("collect pipeline %d of %s: %w", a.ID, d.Project, err)
	}
	log.Info("failed pipeline collected", zap.Strings("failed_jobs", rep.FailedJobs), zap.Strings("sources", rep.Sources), zap.String("good", rep.Good), zap.String("fork", fork))
	return Result{
		Report: &forge.Report{
			ID: key, Repo: p.Forge.CloneURL(d.Project), Commit: a.SHA, Good: rep.Good, Branch: branch, Fork: fork,
			Data: rep.Data, Parsed: &rep.Parsed,
		},
		Release: release,
		Note:    fmt.Sprintf("pipeline %d: report from %s", a.ID, strings.Join(rep.Sources, ", ")),
	}, nil
}

// source is where a pipeline's commits come from and the branch its fix
// goes to. A merge request's pipeline the filter let through may be a
// fork's: the merge request says so through the API, whatever the
// delivery says, and triage holds a fork's to the opt-ins to forks. A
// fork's branch is in the fork, out of redfix's reach: its fix goes to
// the branch the merge request merges into.
func (p *Processor) source(ctx context.Context, d event.Delivery) (fork, branch string, err error) {
	branch = event.Branch(d.Pipeline)
	if !event.OnMergeRequest(d.Pipeline) {
		return "", branch, nil
	}
	src, err := p.Forge.SourceOf(ctx, d.Project, event.MergeRequestIID(d.Pipeline))
	switch {
	case err != nil:
		return "", "", err
	case src.Fork != "":
		return src.Fork, src.Target, nil
	}
	return "", src.Branch, nil
}

// hookTime reads a time as GitLab's hooks write it.
func hookTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 UTC", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

func (p *Processor) mergeRequest(ctx context.Context, log *zap.Logger, d event.Delivery) (Result, error) {
	a := d.MR.ObjectAttributes
	repo := p.Forge.Repo(d.Project)
	key, number := p.Forge.FixKey(repo), int(a.IID)
	log = log.With(zap.Int("merge_request", number))
	var (
		f   task.Fix
		err error
	)
	switch a.Action {
	case "reopen":
		f, err = p.State.RecordReopened(ctx, key, number)
	default:
		at := hookTime(a.UpdatedAt)
		if at.IsZero() {
			at = time.Now()
		}
		merged := a.Action == "merge"
		edited := false
		if merged {
			if edited, err = p.edited(ctx, repo, key, number); err != nil {
				return Result{}, err
			}
		}
		f, err = p.State.RecordClosed(ctx, key, number, merged, edited, at)
	}
	if errors.Is(err, task.ErrNoFix) {
		log.Info("merge request is not a published fix; ignored")
		return Result{Note: "not a published fix"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	log.Info("fix outcome", zap.String("state", string(f.State)))
	if p.Outcomes != nil {
		p.Outcomes.Outcome(ctx, f)
	}
	return Result{Note: "fix " + string(f.State)}, nil
}

// edited reports whether a person pushed to the merge request's branch
// before it was merged: redfix pushes one commit, and one more for each
// revision a reviewer asked for.
func (p *Processor) edited(ctx context.Context, repo forge.RepoID, key string, number int) (bool, error) {
	revs, err := p.State.Revisions(ctx, key, number)
	if err != nil {
		return false, err
	}
	n, err := p.Forge.Commits(ctx, repo, number)
	if err != nil {
		return false, err
	}
	return n > 1+revs, nil
}

func (p *Processor) note(ctx context.Context, log *zap.Logger, d event.Delivery) (Result, error) {
	a := d.Note.ObjectAttributes
	if !forge.IsCommand(a.Note) {
		return p.thread(ctx, log, d)
	}
	if p.Commands == nil {
		log.Info("command ignored: commands are off")
		return Result{Note: "ignored: commands are off"}, nil
	}
	login := ""
	if d.Note.User != nil {
		login = d.Note.User.Username
	}
	author := gitlab.UserOf(login)
	if self := p.Forge.Self(ctx); self != "" && strings.EqualFold(self, login) {
		author.Bot = true // redfix's own notes
	}
	note, err := p.Commands.Comment(ctx, forge.Comment{
		Repo: p.Forge.Repo(d.Project), Number: int(d.Note.MergeRequest.IID), OnChangeRequest: true,
		ID: a.ID, Author: author, Body: a.Note,
	})
	return Result{Note: note}, err
}

// thread acts on a note in a discussion thread on one of redfix's merge
// requests. The note that opened a resolvable thread, unresolved, is how
// GitLab's reviewers ask for changes: as the API tells it (who wrote it,
// what, and that the thread is open), never as the hook does, it is
// recorded as a review requesting changes and handed to the commands,
// which revise the merge request when its author may write (the member
// API, Developer or higher), as for GitHub's review requesting changes.
// Replies and threads already resolved are no request.
func (p *Processor) thread(ctx context.Context, log *zap.Logger, d event.Delivery) (Result, error) {
	a := d.Note.ObjectAttributes
	repo, number := p.Forge.Repo(d.Project), int(d.Note.MergeRequest.IID)
	log = log.With(zap.Int("merge_request", number), zap.String("discussion", a.DiscussionID))
	rv, ok, err := p.Forge.ChangesRequested(ctx, repo, number, a.DiscussionID, a.ID)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		log.Info("note in a thread that asks for nothing new: a reply, or a thread resolved or not resolvable")
		return Result{Note: "ignored: not a thread's opening note, unresolved"}, nil
	}
	if self := p.Forge.Self(ctx); self != "" && strings.EqualFold(self, rv.Author.Login) {
		rv.Author.Bot = true // redfix's own threads
	}
	f, err := p.State.RecordReview(ctx, p.Forge.FixKey(repo), number, string(rv.State), rv.At)
	if errors.Is(err, task.ErrNoFix) {
		log.Info("thread on a merge request that is not a published fix; ignored")
		return Result{Note: "not a published fix"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	log.Info("fix reviewed", zap.String("review", string(rv.State)), zap.Bool("changes_requested", f.ChangesRequested), zap.String("user", rv.Author.Login))
	if p.Commands == nil {
		return Result{Note: "fix reviewed"}, nil
	}
	note, err := p.Commands.Reviewed(ctx, rv)
	if err != nil {
		return Result{}, err
	}
	return Result{Note: "fix reviewed; " + note}, nil
}
