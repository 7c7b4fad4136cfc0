package triage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// group decides one failure group of the report: it claims the group (or
// finds who holds it), gathers the evidence (re-runs, history, bisection),
// applies the rules, and saves a dropped task (a failed one when there is
// no verdict on the failure: the repository's setup failed, or its tests
// run differently here than in CI), or queues a job and saves its task.
func (p *process) group(ctx context.Context, g Group, log *zap.Logger) (Outcome, error) {
	r := p.newGroupRun(g, log)
	if reason, err := r.admit(ctx); err != nil || reason != "" {
		if err != nil {
			return r.out, err
		}
		return r.drop(ctx, reason)
	}
	// The triage's own work stops when another task takes the group (its
	// claim lapsed, and another report's triage claimed it).
	work, lostTo, stopRefresh := p.t.keepClaim(ctx, g.Fingerprint, r.id, r.log)
	defer stopRefresh()
	// From here the group is ours: give it back unless a task for it is
	// saved (dropped, failed or queued).
	decided := false
	defer func() {
		if decided {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := p.t.store.ReleaseGroup(rctx, g.Fingerprint, r.id); err != nil {
			r.log.Error("release group", zap.Error(err))
		}
		p.releaseBlame(rctx, r.id, r.log)
	}()
	end, err := r.evidence(ctx, work, lostTo)
	if err != nil {
		return r.out, err
	}
	if end.status != "" {
		o, err := r.end(ctx, end)
		// A group lost to another task is that task's to keep.
		decided = err == nil && !end.lost
		return o, err
	}
	return r.queue(ctx, &decided)
}

// groupRun is the triage of one failure group: the task being decided
// and what its steps share.
type groupRun struct {
	p   *process
	g   Group
	id  string
	tk  task.Task
	out Outcome
	log *zap.Logger
	// pol is the repository's policy at the commit.
	pol *repoconfig.Policy
	// resumed: this report's earlier delivery claimed the group and
	// stopped before deciding it.
	resumed bool
}

func (p *process) newGroupRun(g Group, log *zap.Logger) *groupRun {
	t, in := p.t, p.in
	id := taskID(in, g.Fingerprint, t.now())
	out := Outcome{Fingerprint: g.Fingerprint, TaskID: id, Tests: g.Tests()}
	return &groupRun{
		p: p, g: g, id: id, out: out,
		log: log.With(zap.String("task_id", id), zap.String("fingerprint", g.Fingerprint), zap.Strings("tests", out.Tests)),
		tk: task.Task{
			ID:          id,
			Fingerprint: g.Fingerprint,
			Repo:        in.Repo,
			Commit:      in.Commit,
			Branch:      in.Branch,
			Failures:    g.Failures,
			CreatedAt:   t.now().UTC(),
		},
	}
}

// ending is how a group's triage ends before a job is queued: its task
// saved dropped or failed with reason. lost: another task took the group
// while this triage ran (dropped as its duplicate; the group is not ours
// to keep).
type ending struct {
	status task.Status
	reason string
	lost   bool
}

func dropped(reason string) (ending, error) {
	return ending{status: task.StatusDropped, reason: reason}, nil
}

// end saves the task as e says.
func (r *groupRun) end(ctx context.Context, e ending) (Outcome, error) {
	if e.status == task.StatusFailed {
		return r.p.fail(ctx, r.tk, r.out, e.reason, r.log)
	}
	return r.drop(ctx, e.reason)
}

// drop saves the task as dropped with reason.
func (r *groupRun) drop(ctx context.Context, reason string) (Outcome, error) {
	r.tk.Status, r.tk.Reason = task.StatusDropped, reason
	r.tk.UpdatedAt = r.p.t.now().UTC()
	if err := r.p.t.store.SaveTask(ctx, r.tk); err != nil {
		return r.out, fmt.Errorf("save dropped task %s: %w", r.id, err)
	}
	r.log.Info("dropped", zap.String("reason", reason), zap.Int("test_runs", r.out.TestRuns))
	r.out.Status, r.out.Reason, r.out.Task = task.StatusDropped, reason, &r.tk
	return r.out, nil
}

// lostOr is err, or, when another task took the group meanwhile (lostTo
// names it), the ending of a duplicate.
func lostOr(lostTo func() string, err error) (ending, error) {
	switch owner := lostTo(); owner {
	case "":
		return ending{}, err
	case unknownOwner:
		return ending{status: task.StatusDropped, reason: "duplicate: another task took the group while this triage ran", lost: true}, nil
	default:
		return ending{status: task.StatusDropped, reason: "duplicate of task " + owner + ": it took the group while this triage ran", lost: true}, nil
	}
}

// admit decides whether the group is triaged at all: the repository's
// opt-outs, forks and policy, the group's claim (taken, resumed, or taken
// over from a task that ended with no verdict) and the day's budget. A
// reason drops the group.
func (r *groupRun) admit(ctx context.Context) (reason string, err error) {
	p, t, in := r.p, r.p.t, r.p.in
	if optedOut(t.cfg.OptOut, in.Repo) {
		return "repository opted out", nil
	}
	if reason, err := p.forkRefused(ctx, &r.tk, r.log); err != nil || reason != "" {
		return reason, err
	}
	if r.pol, err = p.repoPolicy(ctx, r.log); err != nil {
		return "", err
	}
	if reason := optedOutByFile(r.pol); reason != "" {
		return reason, nil
	}
	existing, created, err := t.store.ClaimGroup(ctx, r.g.Fingerprint, r.id)
	if err != nil {
		return "", fmt.Errorf("claim group %s: %w", r.g.Fingerprint, err)
	}
	switch {
	case created:
		r.log.Info("claimed group")
	case existing == r.id:
		// This report's earlier delivery claimed the group and stopped
		// (a crash, a shutdown): go on where it left off.
		r.log.Info("resuming the group's triage after an interrupted delivery")
		r.resumed = true
		return "", nil
	default:
		reason, tookOver, err := t.ownedByAnother(ctx, r.g.Fingerprint, existing, r.id)
		if err != nil || !tookOver {
			return reason, err
		}
		r.log.Info("took the group over from a task that ended with no verdict on the failure", zap.String("previous_task", existing))
	}
	// A budget spent for today stops the work before it starts; the
	// group is left unclaimed, to be triaged when there is room again.
	reason, err = t.budgetSpent(ctx, in.Repo, t.dailyLimitWith(in.Repo, r.pol))
	if err == nil && reason != "" {
		err = t.store.ReleaseGroup(ctx, r.g.Fingerprint, r.id)
	}
	if err != nil {
		return "", fmt.Errorf("daily job budget of %s: %w", in.Repo, err)
	}
	if reason != "" {
		addRule(&r.tk, RuleBudget, task.RuleDrop, reason)
	}
	return reason, nil
}

// evidence gathers what decides the failure in a workspace at the commit:
// the language and its setup, the re-runs and the bisection (a build
// group's or a test group's), a person's fix in flight, and the blame
// commit's claim. The runs use work, which ends when another task takes
// the group (lostTo). An ending with no status goes on to the queue.
func (r *groupRun) evidence(ctx, work context.Context, lostTo func() string) (ending, error) {
	p, tk, log := r.p, &r.tk, r.log
	ws, err := p.workspace(work)
	if err != nil {
		return lostOr(lostTo, err)
	}
	tk.Commit = ws.Commit
	langReason, err := p.language(work, ws, log)
	tk.TestSettings = p.tests
	if err != nil || langReason != "" {
		if lostTo() != "" || err != nil {
			return lostOr(lostTo, err)
		}
		if p.setupFailed {
			return ending{status: task.StatusFailed, reason: langReason}, nil
		}
		return dropped(langReason)
	}
	// A test file that did not collect is a build failure of the file; a
	// file named by CI's absolute path is named by the checkout's.
	tk.Failures = uncollectedFiles(p.bisectLanguage(), ws.Dir, checkoutFiles(ws.Dir, tk.Failures))
	r.g.Failures = tk.Failures
	var (
		bis    task.Bisection
		bisErr error
		reason string
	)
	if isBuildGroup(r.g) {
		bis, bisErr, reason, err = p.buildEvidence(ctx, work, ws.Repo, tk, &r.out, log)
	} else {
		bis, bisErr, reason, err = p.testEvidence(ctx, work, lostTo, r.g, ws.Repo, tk, &r.out, log)
	}
	if lostTo() != "" {
		return lostOr(lostTo, err)
	}
	var nv *noVerdictError
	switch {
	case errors.As(err, &nv):
		return ending{status: task.StatusFailed, reason: nv.reason}, nil
	case err != nil:
		return ending{}, err
	case reason != "":
		return dropped(reason)
	}
	if bisErr != nil {
		// Where the failure started is evidence for the agent, not a
		// condition of repairing it: go on without a blame.
		log.Warn("bisect", zap.Error(bisErr))
	} else {
		log.Info("bisected", zap.String("blame", bis.Blame), zap.Int("steps", bis.Steps))
	}
	tk.Bisection = bis
	if reason := p.humanFix(ctx, ws.Repo, tk, log); reason != "" {
		return dropped(reason)
	}
	return r.claimBlame(ctx, bis, bisErr)
}

// claimBlame takes the blame commit for this task: one task per breaking
// commit, the others' failures added to it.
func (r *groupRun) claimBlame(ctx context.Context, bis task.Bisection, bisErr error) (ending, error) {
	if bisErr != nil || bis.Blame == "" {
		return ending{}, nil
	}
	repo := r.p.in.Repo
	owner, err := r.p.claimBlame(ctx, repo, bis.Blame, r.id, r.tk.Failures)
	if err != nil {
		return ending{}, err
	}
	if owner != "" {
		return dropped(fmt.Sprintf("same blame commit %s as task %s: one task per breaking commit (its failures were added to it)", task.Short(bis.Blame), owner))
	}
	// Ours: the claim lives as long as the task is active (the store
	// follows its status).
	r.tk.BlameClaim = BlameGroup(repo, bis.Blame)
	return ending{}, nil
}

// queue queues the group's job and saves its task as queued; decided is
// set once the job exists (the claim stays with this task).
//
// Queue first, then record: the job's message ID is the group's
// fingerprint and this task's ID, stable across redeliveries of the
// report, so a crash after queueing and before recording is repaired by
// the redelivery (queueing again is a no-op, recording follows), and the
// worker records the task when it starts in any case. The other order
// could leave a task recorded as queued that no worker will ever take.
func (r *groupRun) queue(ctx context.Context, decided *bool) (Outcome, error) {
	t, tk, log := r.p.t, &r.tk, r.log
	repo := r.p.in.Repo
	// The claim must be this task's when the job is queued: a claim that
	// passed to another task means that task queues the group.
	held, err := t.store.RefreshGroup(ctx, r.g.Fingerprint, r.id)
	if err != nil {
		return r.out, fmt.Errorf("renew claim of group %s: %w", r.g.Fingerprint, err)
	}
	if !held {
		return r.drop(ctx, "duplicate: another task took the group while this triage ran")
	}
	reason, giveBack, err := t.takeBudget(ctx, repo, t.dailyLimitWith(repo, r.pol), tk, log)
	if err != nil {
		return r.out, fmt.Errorf("daily job budget of %s: %w", repo, err)
	}
	switch {
	case reason != "" && r.resumed:
		// An earlier delivery of this report may have queued the job and
		// counted it: queue (a no-op then) rather than drop a queued task.
		log.Warn("resumed triage past the daily job budget", zap.String("budget", reason))
		tk.Rules[len(tk.Rules)-1] = task.RuleCheck{Rule: RuleBudget, Verdict: task.RuleNotChecked, Detail: "an earlier delivery of this report may have counted the job: " + reason}
		giveBack = func() {}
	case reason != "":
		// Dropped, not decided: the group and its blame are released, to
		// be triaged again when the budget has room.
		return r.drop(ctx, reason)
	}
	tk.Status = task.StatusQueued
	tk.UpdatedAt = t.now().UTC()
	dup, err := t.queue.Enqueue(ctx, job.New(*tk))
	if err != nil {
		giveBack()
		return r.out, fmt.Errorf("enqueue task %s: %w", r.id, err)
	}
	if dup {
		// An earlier delivery of this report queued it and counted it.
		giveBack()
	}
	*decided = true // the job exists: the claim stays with this task
	if err := t.store.SaveTask(ctx, *tk); err != nil {
		return r.out, fmt.Errorf("save task %s: %w", r.id, err)
	}
	if dup {
		log.Info("job was already queued by an earlier delivery of this report")
	}
	log.Info("queued", zap.Int("test_runs", r.out.TestRuns))
	r.out.Status, r.out.Task = task.StatusQueued, tk
	return r.out, nil
}

// fail saves the group's task as failed with reason: no verdict on the
// failure (its repository's setup failed), so the group's next report
// takes it over at once (takeOverFrom) instead of waiting out a verdict.
func (p *process) fail(ctx context.Context, tk task.Task, out Outcome, reason string, log *zap.Logger) (Outcome, error) {
	tk.Status, tk.Reason, tk.UpdatedAt = task.StatusFailed, reason, p.t.now().UTC()
	if err := p.t.store.SaveTask(ctx, tk); err != nil {
		return out, fmt.Errorf("save failed task %s: %w", tk.ID, err)
	}
	log.Warn("failed: the failure is triaged again on its next report", zap.String("reason", reason))
	out.Status, out.Reason, out.Task = task.StatusFailed, reason, &tk
	return out, nil
}

func optedOut(list []string, repo string) bool {
	r := normalizeRepo(repo)
	return slices.ContainsFunc(list, func(o string) bool { return normalizeRepo(o) == r })
}

// taskID names the task of one group of one report. With the report's
// submission known, it is the same on every delivery of that report;
// otherwise it is new.
func taskID(in Input, fingerprint string, now time.Time) string {
	if in.Submission == "" || in.Received.IsZero() {
		return newTaskID(now)
	}
	sum := sha256.Sum256([]byte(in.Submission + "\x00" + fingerprint))
	return in.Received.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:6])
}

// newTaskID is unique and sorts by time: 20261122T101500Z-3f9a2b1c4d5e.
func newTaskID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
