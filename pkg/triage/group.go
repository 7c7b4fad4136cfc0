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
	"github.com/redfix/redfix/pkg/task"
)

// group decides one failure group of the report: it claims the group (or
// finds who holds it), gathers the evidence (re-runs, history, bisection),
// applies the rules, and saves a dropped task (a failed one when the
// repository's setup failed), or queues a job and saves its task.
func (p *process) group(ctx context.Context, g Group, log *zap.Logger) (Outcome, error) {
	t, in := p.t, p.in
	id := taskID(in, g.Fingerprint, t.now())
	out := Outcome{Fingerprint: g.Fingerprint, TaskID: id, Tests: g.Tests()}
	log = log.With(zap.String("task_id", id), zap.String("fingerprint", g.Fingerprint), zap.Strings("tests", out.Tests))
	tk := task.Task{
		ID:          id,
		Fingerprint: g.Fingerprint,
		Repo:        in.Repo,
		Commit:      in.Commit,
		Branch:      in.Branch,
		Failures:    g.Failures,
		CreatedAt:   t.now().UTC(),
	}
	drop := func(reason string) (Outcome, error) {
		tk.Status, tk.Reason = task.StatusDropped, reason
		tk.UpdatedAt = t.now().UTC()
		if err := t.store.SaveTask(ctx, tk); err != nil {
			return out, fmt.Errorf("save dropped task %s: %w", id, err)
		}
		log.Info("dropped", zap.String("reason", reason), zap.Int("test_runs", out.TestRuns))
		out.Status, out.Reason, out.Task = task.StatusDropped, reason, &tk
		return out, nil
	}

	if optedOut(t.cfg.OptOut, in.Repo) {
		return drop("repository opted out")
	}
	if reason, err := p.forkRefused(ctx, &tk, log); err != nil || reason != "" {
		if err != nil {
			return out, err
		}
		return drop(reason)
	}
	pol, err := p.repoPolicy(ctx, log)
	if err != nil {
		return out, err
	}
	if reason := optedOutByFile(pol); reason != "" {
		return drop(reason)
	}
	existing, created, err := t.store.ClaimGroup(ctx, g.Fingerprint, id)
	if err != nil {
		return out, fmt.Errorf("claim group %s: %w", g.Fingerprint, err)
	}
	switch {
	case created:
		log.Info("claimed group")
	case existing == id:
		// This report's earlier delivery claimed the group and stopped
		// (a crash, a shutdown): go on where it left off.
		log.Info("resuming the group's triage after an interrupted delivery")
	default:
		reason, tookOver, err := t.ownedByAnother(ctx, g.Fingerprint, existing, id)
		if err != nil {
			return out, err
		}
		if !tookOver {
			return drop(reason)
		}
		log.Info("took the group over from a task that ended with no verdict on the failure", zap.String("previous_task", existing))
		created = true
	}
	resumed := !created
	if !resumed {
		// A budget spent for today stops the work before it starts; the
		// group is left unclaimed, to be triaged when there is room again.
		reason, err := t.budgetSpent(ctx, in.Repo, t.dailyLimitWith(in.Repo, pol))
		if err == nil && reason != "" {
			err = t.store.ReleaseGroup(ctx, g.Fingerprint, id)
		}
		if err != nil {
			return out, fmt.Errorf("daily job budget of %s: %w", in.Repo, err)
		}
		if reason != "" {
			addRule(&tk, RuleBudget, task.RuleDrop, reason)
			return drop(reason)
		}
	}
	// The triage's own work stops when another task takes the group (its
	// claim lapsed, and another report's triage claimed it).
	work, lostTo, stopRefresh := t.keepClaim(ctx, g.Fingerprint, id, log)
	defer stopRefresh()
	lost := func(err error) (Outcome, error) {
		switch owner := lostTo(); owner {
		case "":
			return out, err
		case unknownOwner:
			return drop("duplicate: another task took the group while this triage ran")
		default:
			return drop("duplicate of task " + owner + ": it took the group while this triage ran")
		}
	}
	// From here the group is ours: give it back unless a task for it is
	// saved (dropped or queued).
	decided := false
	decide := func(reason string) (Outcome, error) {
		o, err := drop(reason)
		decided = err == nil
		return o, err
	}

	defer func() {
		if decided {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := t.store.ReleaseGroup(rctx, g.Fingerprint, id); err != nil {
			log.Error("release group", zap.Error(err))
		}
		p.releaseBlame(rctx, id, log)
	}()
	ws, err := p.workspace(work)
	if err != nil {
		return lost(err)
	}
	tk.Commit = ws.Commit
	langReason, err := p.language(work, ws, log)
	tk.TestSettings = p.tests
	if err != nil || langReason != "" {
		if lostTo() != "" || err != nil {
			return lost(err)
		}
		if p.setupFailed {
			o, err := p.fail(ctx, tk, out, langReason, log)
			decided = err == nil
			return o, err
		}
		return decide(langReason)
	}
	// A test file that did not collect is a build failure of the file; a
	// file named by CI's absolute path is named by the checkout's.
	tk.Failures = uncollectedFiles(p.bisectLanguage(), ws.Dir, checkoutFiles(ws.Dir, tk.Failures))
	g.Failures = tk.Failures
	var (
		bis    task.Bisection
		bisErr error
		reason string
	)
	if isBuildGroup(g) {
		bis, bisErr, reason, err = p.buildEvidence(ctx, work, ws.Repo, &tk, &out, log)
	} else {
		bis, bisErr, reason, err = p.testEvidence(ctx, work, lostTo, g, ws.Repo, &tk, &out, log)
	}
	if lostTo() != "" {
		return lost(err)
	}
	var nv *noVerdictError
	if errors.As(err, &nv) {
		o, err := p.fail(ctx, tk, out, nv.reason, log)
		decided = err == nil
		return o, err
	}
	if err != nil {
		return out, err
	}
	if reason != "" {
		return decide(reason)
	}
	if bisErr != nil {
		// Where the failure started is evidence for the agent, not a
		// condition of repairing it: go on without a blame.
		log.Warn("bisect", zap.Error(bisErr))
	} else {
		log.Info("bisected", zap.String("blame", bis.Blame), zap.Int("steps", bis.Steps))
	}
	tk.Bisection = bis
	if reason := p.humanFix(ctx, ws.Repo, &tk, log); reason != "" {
		return decide(reason)
	}
	if bisErr == nil && bis.Blame != "" {
		owner, err := p.claimBlame(ctx, in.Repo, bis.Blame, id, tk.Failures)
		if err != nil {
			return out, err
		}
		if owner != "" {
			return decide(fmt.Sprintf("same blame commit %s as task %s: one task per breaking commit (its failures were added to it)", task.Short(bis.Blame), owner))
		}
		// Ours: the claim lives as long as the task is active (the store
		// follows its status).
		tk.BlameClaim = BlameGroup(in.Repo, bis.Blame)
	}

	// Queue first, then record: the job's message ID is the group's
	// fingerprint and this task's ID, stable across redeliveries of the
	// report, so a crash after queueing and before recording is repaired by
	// the redelivery (queueing again is a no-op, recording follows), and
	// the worker records the task when it starts in any case. The other
	// order could leave a task recorded as queued that no worker will ever
	// take.
	// The claim must be this task's when the job is queued: a claim that
	// passed to another task means that task queues the group.
	held, err := t.store.RefreshGroup(ctx, g.Fingerprint, id)
	if err != nil {
		return out, fmt.Errorf("renew claim of group %s: %w", g.Fingerprint, err)
	}
	if !held {
		return drop("duplicate: another task took the group while this triage ran")
	}
	reason, giveBack, err := t.takeBudget(ctx, in.Repo, t.dailyLimitWith(in.Repo, pol), &tk, log)
	if err != nil {
		return out, fmt.Errorf("daily job budget of %s: %w", in.Repo, err)
	}
	switch {
	case reason != "" && resumed:
		// An earlier delivery of this report may have queued the job and
		// counted it: queue (a no-op then) rather than drop a queued task.
		log.Warn("resumed triage past the daily job budget", zap.String("budget", reason))
		tk.Rules[len(tk.Rules)-1] = task.RuleCheck{Rule: RuleBudget, Verdict: task.RuleNotChecked, Detail: "an earlier delivery of this report may have counted the job: " + reason}
		giveBack = func() {}
	case reason != "":
		// Dropped, not decided: the group and its blame are released, to
		// be triaged again when the budget has room.
		return drop(reason)
	}
	tk.Status = task.StatusQueued
	tk.UpdatedAt = t.now().UTC()
	dup, err := t.queue.Enqueue(ctx, job.New(tk))
	if err != nil {
		giveBack()
		return out, fmt.Errorf("enqueue task %s: %w", id, err)
	}
	if dup {
		// An earlier delivery of this report queued it and counted it.
		giveBack()
	}
	decided = true // the job exists: the claim stays with this task
	if err := t.store.SaveTask(ctx, tk); err != nil {
		return out, fmt.Errorf("save task %s: %w", id, err)
	}
	if dup {
		log.Info("job was already queued by an earlier delivery of this report")
	}
	log.Info("queued", zap.Int("test_runs", out.TestRuns))
	out.Status, out.Task = task.StatusQueued, &tk
	return out, nil
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
