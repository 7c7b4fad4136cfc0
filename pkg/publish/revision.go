package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// Revision is a revision of one of redfix's pull requests, as the worker
// hands it over: the change on top of the branch's head and what checked
// it, or why there is none to push.
type Revision struct {
	Task     task.Task
	Revision job.Revision
	Patch    string // on top of Revision.Head; "" when Reason is set
	Summary  string
	Gates    []task.Gate
	// Reason, when set, says why nothing is pushed.
	Reason string
}

// PublishRevision pushes an accepted revision as one more commit on the
// pull request's branch, on top of the head the revision started from (a
// plain push: the first commit is kept, and a branch that moved since is
// not overwritten), then answers in the pull request's thread with what
// changed, or why nothing was pushed. It returns the new commit ("" when
// nothing was pushed).
func (g *Forge) PublishRevision(ctx context.Context, r Revision) (string, error) {
	rev, t := r.Revision, r.Task
	log := g.Log.With(zap.String("task_id", t.ID), zap.String("repo", rev.Repo), zap.Int("pull_request", rev.Number), zap.Int("revision", rev.N))
	repo, err := g.repo(t.Repo)
	if err != nil {
		return "", fmt.Errorf("revise %s#%d: %w", rev.Repo, rev.Number, err)
	}
	cred, err := repo.cr.Credentials(ctx, repo.id)
	if err != nil {
		return "", fmt.Errorf("revise %s#%d: %w", rev.Repo, rev.Number, err)
	}
	answer := func(body string) error {
		if _, err := repo.cr.Comment(ctx, repo.id, rev.Number, hideSecrets(body, cred)); err != nil {
			return fmt.Errorf("answer on %s#%d: %w", rev.Repo, rev.Number, err)
		}
		return nil
	}
	if r.Reason != "" || strings.TrimSpace(r.Patch) == "" {
		log.Info("revision not pushed", zap.String("reason", r.Reason))
		return "", answer(fmt.Sprintf("Revision %d, as @%s asked, was not pushed: %s", rev.N, rev.Reviewer, inline(orElse(r.Reason, "the agent made no change"))))
	}
	mirror, err := g.Mirrors.Mirror(ctx, t.Repo, rev.Head)
	if err != nil {
		return "", fmt.Errorf("revise %s#%d: %w", rev.Repo, rev.Number, err)
	}
	msg := fmt.Sprintf("redfix: revision %d, as %s asked in review\n\n%s\n\nRedfix-Task: %s\nRedfix-Fingerprint: %s\n",
		rev.N, rev.Reviewer, markdown.NoRefs(hideSecrets(firstLines(r.Summary, 20), cred)), t.ID, t.Fingerprint)
	sha, err := commitPatch(ctx, mirror, rev.Head, r.Patch, msg)
	if err != nil {
		return "", fmt.Errorf("revise %s#%d: %w", rev.Repo, rev.Number, err)
	}
	if err := push(ctx, mirror, cred.Env, t.Repo, sha, "refs/heads/"+rev.Branch, false); err != nil {
		if errors.Is(err, errRejected) {
			log.Info("the branch moved since the revision was asked for: not pushed")
			return "", answer(fmt.Sprintf("Revision %d, as @%s asked, was not pushed: the branch %s moved since %s, and redfix does not overwrite it.", rev.N, rev.Reviewer, code(rev.Branch), code(task.Short(rev.Head))))
		}
		return "", fmt.Errorf("revise %s#%d: push %s: %w", rev.Repo, rev.Number, rev.Branch, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Revision %d, as @%s asked: pushed %s on %s.\n\n", rev.N, rev.Reviewer, code(task.Short(sha)), code(rev.Branch))
	b.WriteString("**What changed**\n\n" + codeBlock("", diffstat(r.Patch)))
	if s := strings.TrimSpace(r.Summary); s != "" {
		b.WriteString("**The agent's summary**\n\n" + markdown.Quote(hideSecrets(firstLines(s, 20), cred)) + "\n")
	}
	writeGates(&b, r.Gates)
	log.Info("revision pushed", zap.String("commit", sha))
	return sha, answer(b.String())
}

func orElse(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// firstLines is s's first n lines.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
