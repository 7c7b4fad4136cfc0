// Package deliveries is what becomes of GitHub's webhook deliveries once
// they are stored, on the far side of the reports stream: as triage
// consumes them, the Processor turns a failed workflow run on a watched
// branch into a test report for triage, and the reviews and closing of
// redfix's own pull requests into their outcomes. Resync finds what the
// webhooks missed and stores it as deliveries of its own; the claim on a
// run (RunKey) makes a run triaged once, whichever delivery brings it.
package deliveries

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/runreport"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

// Collector reads a failed run's report.
type Collector interface {
	Collect(ctx context.Context, client *gogithub.Client, owner, repo string, run *gogithub.WorkflowRun, globs []string) (runreport.Report, error)
}

// State is what the processor keeps: who triages each run, and the
// outcomes of published fixes.
type State interface {
	ClaimRun(ctx context.Context, run, owner string, ttl time.Duration) (ok bool, holder string, err error)
	ReleaseRun(ctx context.Context, run, owner string) error
	RecordReview(ctx context.Context, repo string, number int, state string, at time.Time) (task.Fix, error)
	RecordClosed(ctx context.Context, repo string, number int, merged, edited bool, at time.Time) (task.Fix, error)
	RecordReopened(ctx context.Context, repo string, number int) (task.Fix, error)
	// Revisions is how many revisions redfix pushed to a pull request.
	Revisions(ctx context.Context, repo string, number int) (int, error)
}

// RunClaimTTL is how long a triaged run is remembered: longer than GitHub
// keeps failed deliveries (3 days) and than the resync looks back.
const RunClaimTTL = 14 * 24 * time.Hour

// Processor acts on stored deliveries, as triage consumes them
// (triage.Events).
type Processor struct {
	Filter event.Filter
	// Forge is the GitHub the deliveries come from: its clients read a
	// failed run, and its repositories are named as it serves them. Nil
	// when no GitHub credentials are configured: a run's delivery is then
	// invalid, nothing can read the run.
	Forge     *github.Forge
	Collector Collector
	State     State
	// Commands, when set, acts on the /redfix commands in comments and
	// on the reviews of redfix's pull requests that request changes
	// (pkg/command); nil drops the commands with a log line.
	Commands Commands
	// Outcomes, when set, hears of each outcome of a published pull
	// request (merged, closed, reopened) once it is recorded.
	Outcomes Outcomes
	Log      *zap.Logger
}

// Outcomes hears of the recorded outcomes of redfix's pull requests; it
// cannot fail the delivery (what it could not do is its own to log).
type Outcomes interface {
	Outcome(ctx context.Context, f task.Fix)
}

// Commands acts on what people tell redfix on its pull requests and
// issues (command.Handler). Its notes say what was done, for the log.
type Commands interface {
	// Comment acts on a comment that starts with /redfix.
	Comment(ctx context.Context, c forge.Comment) (note string, err error)
	// Reviewed acts on a review of one of redfix's pull requests, once its
	// outcome is recorded.
	Reviewed(ctx context.Context, rv forge.Review) (note string, err error)
}

// Result is what came of one delivery: a failed run's report for triage,
// or nothing more to do.
type Result = forge.Processed

// RunKey names a run attempt across deliveries: "owner/name/run/attempt".
func RunKey(repo string, runID int64, attempt int) string {
	return fmt.Sprintf("%s/%d/%d", strings.ToLower(repo), runID, max(attempt, 1))
}

// Process handles one stored GitHub delivery. Errors are retried by the
// intake; ingest.ErrInvalid ones drop the delivery.
func (p *Processor) Process(ctx context.Context, sub ingest.Submission) (Result, error) {
	d, err := event.Decode(sub.Event, sub.Payload)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ingest.ErrInvalid, err)
	}
	log := p.Log.With(zap.String("delivery", sub.ID), zap.String("event", sub.Event), zap.String("repo", d.Repo))
	if skip := d.Skip(p.Filter); skip != "" {
		log.Info("delivery ignored", zap.String("reason", skip))
		return Result{Note: "ignored: " + skip}, nil
	}
	switch {
	case d.Run != nil:
		return p.run(ctx, log, sub, d)
	case d.PR != nil:
		return p.closed(ctx, log, d)
	case d.Review != nil:
		return p.review(ctx, log, d)
	case d.Comment != nil:
		if p.Commands == nil {
			log.Info("command ignored: commands are off")
			return Result{Note: "ignored: commands are off"}, nil
		}
		note, err := p.Commands.Comment(ctx, p.comment(d))
		return Result{Note: note}, err
	}
	return Result{}, fmt.Errorf("%w: event %s has no handler", ingest.ErrInvalid, sub.Event)
}

func (p *Processor) run(ctx context.Context, log *zap.Logger, sub ingest.Submission, d event.Delivery) (Result, error) {
	run := d.Run.GetWorkflowRun()
	repo := d.Run.GetRepo()
	key := RunKey(d.Repo, run.GetID(), run.GetRunAttempt())
	log = log.With(zap.Int64("run", run.GetID()), zap.String("commit", run.GetHeadSHA()))
	ok, holder, err := p.State.ClaimRun(ctx, key, sub.ID, RunClaimTTL)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		log.Info("run already triaged from another delivery", zap.String("holder", holder))
		return Result{Note: "run already triaged from delivery " + holder}, nil
	}
	release := func(ctx context.Context) {
		if err := p.State.ReleaseRun(ctx, key, sub.ID); err != nil {
			log.Warn("release run claim", zap.Error(err))
		}
	}
	owner, name, _ := strings.Cut(d.Repo, "/")
	if p.Forge == nil {
		release(context.WithoutCancel(ctx))
		return Result{}, fmt.Errorf("%w: %w", ingest.ErrInvalid, ErrNoCredentials)
	}
	client, err := p.Forge.Clients().ForRepo(ctx, owner, name)
	if err != nil {
		release(context.WithoutCancel(ctx))
		return Result{}, fmt.Errorf("client for %s: %w", d.Repo, err)
	}
	rep, err := p.Collector.Collect(ctx, client.Client, owner, name, run, p.Filter.Settings(d.Repo).Artifacts)
	if errors.Is(err, runreport.ErrNoReport) {
		// Nothing for triage: the run failed outside the tests. Keep the
		// claim, so that a redelivery does not download it all again.
		log.Info("failed run without a test report", zap.Strings("failed_jobs", rep.FailedJobs))
		return Result{Note: fmt.Sprintf("no test report in run %d (failed jobs: %s)", run.GetID(), strings.Join(rep.FailedJobs, ", "))}, nil
	}
	if err != nil {
		release(context.WithoutCancel(ctx))
		return Result{}, fmt.Errorf("collect run %d of %s: %w", run.GetID(), d.Repo, err)
	}
	cloneURL := repo.GetCloneURL()
	if cloneURL == "" {
		cloneURL = repo.GetHTMLURL() + ".git"
	}
	fork := ForkOf(d.Repo, run)
	log.Info("failed run collected", zap.Strings("failed_jobs", rep.FailedJobs), zap.Strings("sources", rep.Sources), zap.String("good", rep.Good), zap.String("fork", fork))
	return Result{
		Report: &forge.Report{
			ID:     "github-run:" + key,
			Repo:   cloneURL,
			Commit: run.GetHeadSHA(),
			Good:   rep.Good,
			Branch: run.GetHeadBranch(),
			Fork:   fork,
			Data:   rep.Data,
			Parsed: &rep.Parsed,
		},
		Release: release,
		Note:    fmt.Sprintf("run %d: report from %s", run.GetID(), strings.Join(rep.Sources, ", ")),
	}, nil
}

// ForkOf is the head repository of a run that tested a pull request from
// a fork of repo ("owner/name"), or "" when the run's head is repo's own.
// GitHub leaves a fork's run's pull_requests empty: the head repository
// is what tells.
func ForkOf(repo string, run *gogithub.WorkflowRun) string {
	head := run.GetHeadRepository().GetFullName()
	if head == "" || strings.EqualFold(head, repo) {
		return ""
	}
	return head
}

func (p *Processor) closed(ctx context.Context, log *zap.Logger, d event.Delivery) (Result, error) {
	pr := d.PR.GetPullRequest()
	log = log.With(zap.Int("pull_request", pr.GetNumber()))
	var (
		f   task.Fix
		err error
	)
	switch d.PR.GetAction() {
	case "reopened":
		f, err = p.State.RecordReopened(ctx, d.Repo, pr.GetNumber())
	default:
		at := pr.GetClosedAt().Time
		if pr.GetMerged() && !pr.GetMergedAt().IsZero() {
			at = pr.GetMergedAt().Time
		}
		if at.IsZero() {
			at = time.Now()
		}
		revs, rerr := p.State.Revisions(ctx, d.Repo, pr.GetNumber())
		if rerr != nil {
			return Result{}, rerr
		}
		f, err = p.State.RecordClosed(ctx, d.Repo, pr.GetNumber(), pr.GetMerged(), edited(pr, revs), at)
	}
	if errors.Is(err, task.ErrNoFix) {
		log.Info("pull request is not a published fix; ignored")
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

// edited reports whether a human pushed to the branch before it was
// merged: redfix pushes one commit, and one more for each revision a
// reviewer asked for.
func edited(pr *gogithub.PullRequest, revisions int) bool { return pr.GetCommits() > 1+revisions }

// ErrNoCredentials is why a run cannot be read: no GitHub credentials
// are configured.
var ErrNoCredentials = errors.New("GitHub credentials are not configured (REDFIX_GITHUB_TOKEN, or REDFIX_GITHUB_APP_ID and REDFIX_GITHUB_PRIVATE_KEY_FILE)")

// repo is the identity of the repository full ("owner/name").
func (p *Processor) repo(full string) forge.RepoID {
	if p.Forge == nil {
		return forge.RepoID{Path: full}
	}
	return p.Forge.Repo(full)
}

// comment is the delivery's comment in the forge's words.
func (p *Processor) comment(d event.Delivery) forge.Comment {
	c, issue := d.Comment.GetComment(), d.Comment.GetIssue()
	return forge.Comment{
		Repo: p.repo(d.Repo), Number: issue.GetNumber(), OnChangeRequest: issue.IsPullRequest(),
		ID: c.GetID(), Author: github.User(c.GetUser()), Body: c.GetBody(),
	}
}

// reviewOf is the delivery's review in the forge's words; one GitHub sent
// without its time was submitted now.
func (p *Processor) reviewOf(d event.Delivery) forge.Review {
	pr, rv := d.Review.GetPullRequest(), d.Review.GetReview()
	at := rv.GetSubmittedAt().Time
	if at.IsZero() {
		at = time.Now()
	}
	return forge.Review{
		Repo: p.repo(d.Repo), Number: pr.GetNumber(), Author: github.User(rv.GetUser()),
		State: forge.ReviewState(strings.ToLower(rv.GetState())), Body: rv.GetBody(), At: at,
	}
}

func (p *Processor) review(ctx context.Context, log *zap.Logger, d event.Delivery) (Result, error) {
	rv := p.reviewOf(d)
	f, err := p.State.RecordReview(ctx, d.Repo, rv.Number, string(rv.State), rv.At)
	if errors.Is(err, task.ErrNoFix) {
		log.Info("review of a pull request that is not a published fix; ignored")
		return Result{Note: "not a published fix"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	log.Info("fix reviewed", zap.String("review", string(rv.State)), zap.Bool("changes_requested", f.ChangesRequested))
	if p.Commands == nil {
		return Result{Note: "fix reviewed"}, nil
	}
	note, err := p.Commands.Reviewed(ctx, rv)
	if err != nil {
		return Result{}, err
	}
	return Result{Note: "fix reviewed; " + note}, nil
}
