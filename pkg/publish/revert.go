package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/task"
)

// RevertLabel is put on every revert pull request, beside Label.
const RevertLabel = "redfix:revert"

// RevertBranchPrefix starts the branches of revert pull requests: one per
// culprit, redfix/revert-<12 hex digits>.
const RevertBranchPrefix = "redfix/revert-"

// Revert is a revert pull request: the commit made by `git revert` of the
// task's blame commit on the default branch's head, and why.
type Revert struct {
	Task task.Task
	// Commit is the revert, on Head, in the repository's mirror; Subject
	// is its message's first line.
	Commit, Subject string
	// Base is the default branch and Head the commit it stood at.
	Base, Head string
	// Why says what led to the revert (the repair found nothing that
	// passed the gates, the repository asks for revert-first, a person
	// asked); Tests what the failing tests did at the revert.
	Why, Tests string
}

// RevertBranch is the revert pull request's branch for culprit.
func RevertBranch(culprit string) string { return RevertBranchPrefix + refSafe(task.Short(culprit)) }

// RevertBody is the revert pull request's Markdown: why, the failing
// tests, the culprit and how triage found it, the re-runs, what the tests
// did at the revert, and the group's marker.
func RevertBody(r Revert, l Links) string {
	t := r.Task
	var b strings.Builder
	fmt.Fprintf(&b, "redfix reverts %s: triage found it broke %s.\n\n", commitRef(l, t.Bisection.Blame), plural(len(t.Failures), "test", "tests"))
	b.WriteString("**Why a revert:** " + inline(r.Why) + "\n\n")
	b.WriteString("## Failing tests\n\n")
	writeFailures(&b, t.Failures, l)
	b.WriteString("## The culprit\n\n")
	writeBisection(&b, t.Bisection, "", l)
	if c := t.Bisection.Confidence; c > 0 {
		fmt.Fprintf(&b, "Triage's confidence in the culprit: %.3f.\n\n", c)
	}
	b.WriteString("## Reproduction\n\n")
	writeFlakiness(&b, t)
	b.WriteString("## At the revert\n\n")
	fmt.Fprintf(&b, "The revert is %s on %s at %s; it changes only what the culprit changed, back to how it was. ",
		code("git revert --no-edit "+task.Short(t.Bisection.Blame)), code(r.Base), commitRef(l, r.Head))
	b.WriteString(inline(r.Tests) + "\n\n")
	b.WriteString("Merge it to make the branch green again; the change can come back with a fix.\n\n")
	b.WriteString(Marker(t.Fingerprint) + "\n")
	return b.String()
}

// PublishRevert pushes the revert to RevertBranch and opens its pull
// request, labelled, with the culprit's author and the failing tests'
// owners asked for review; an open pull request from that branch is
// reported instead of opening another. It returns the pull request's page.
func (g *Forge) PublishRevert(ctx context.Context, rv Revert) (string, error) {
	t := rv.Task
	culprit := t.Bisection.Blame
	branch := RevertBranch(culprit)
	log := g.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("culprit", culprit), zap.String("branch", branch))
	r, err := g.repo(t.Repo)
	if err != nil {
		return "", fmt.Errorf("publish the revert of %s: %w", culprit, err)
	}
	if existing, err := r.openPull(ctx, branch); err != nil {
		return "", fmt.Errorf("publish the revert of %s: %w", culprit, err)
	} else if existing != nil {
		log.Info("the culprit's revert is open: not opening another", zap.String("pull_request", existing.URL))
		return existing.URL, nil
	}
	if err := r.read(ctx, rv.Base); err != nil {
		return "", fmt.Errorf("publish the revert of %s: %w", culprit, err)
	}
	mirror, err := g.Mirrors.Mirror(ctx, t.Repo, rv.Commit)
	if err != nil {
		return "", fmt.Errorf("publish the revert of %s: %w", culprit, err)
	}
	cred, err := r.cr.Credentials(ctx, r.id)
	if err != nil {
		return "", fmt.Errorf("publish the revert of %s: %w", culprit, err)
	}
	t.Failures = redactFailures(t.Failures, cred)
	rv.Task = t
	tests := testFiles(ctx, mirror, g.Tests, t)
	body := hideSecrets(RevertBody(rv, r.links(t, tests)), cred)
	title := hideSecrets(cut(rv.Subject, maxTitle), cred)
	if err := push(ctx, mirror, cred.Env, t.Repo, rv.Commit, "refs/heads/"+branch, false); err != nil {
		if !errors.Is(err, errRejected) {
			return "", fmt.Errorf("publish the revert of %s: push %s: %w", culprit, branch, err)
		}
		// Left by an attempt that opened no pull request: taken over.
		if err := push(ctx, mirror, cred.Env, t.Repo, rv.Commit, "refs/heads/"+branch, true); err != nil {
			return "", fmt.Errorf("publish the revert of %s: push %s: %w", culprit, branch, err)
		}
	}
	created, err := r.cr.OpenChangeRequest(ctx, r.id, forge.NewChangeRequest{Title: title, Head: branch, Base: r.base, Body: body})
	if err != nil {
		if errors.Is(err, forge.ErrExists) {
			if existing, lerr := r.openPull(ctx, branch); lerr == nil && existing != nil {
				return existing.URL, nil
			}
		}
		g.cleanup(ctx, r, branch, "", log)
		return "", fmt.Errorf("publish the revert of %s: open the pull request: %w", culprit, err)
	}
	log = log.With(zap.String("pull_request", created.URL))
	for _, l := range []string{Label, RevertLabel} {
		if err := r.cr.AddLabel(ctx, r.id, created.Number, l); err != nil {
			log.Warn("label the revert pull request", zap.String("label", l), zap.Error(err))
		}
	}
	// The owners are read where the revert lands: the default branch's head.
	at := t
	at.Commit = rv.Head
	g.requestReviews(ctx, r, created, PullRequest{Task: at}, mirror, tests, log)
	log.Info("revert pull request opened", zap.String("commit", rv.Commit))
	return created.URL, nil
}
