package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// Delivery is what publishing delivered: the fix's address and, where the
// repository's forge has no page that shows it (a plain git remote), the
// description a pull request would have had, for redfix to show with the
// task.
type Delivery struct {
	URL string
	// Description is "# title" and the body; "" where the forge shows
	// the change request's own.
	Description string
}

// Deliverer publishes a pull request and says what it delivered.
type Deliverer interface {
	Deliver(ctx context.Context, pr PullRequest) (Delivery, error)
}

// Branches is a forge whose change request is a branch pushed to the
// repository (a plain git remote): no page, labels, reviews or comments.
type Branches interface {
	// PushCredentials are git's credentials to push to repoURL.
	PushCredentials(ctx context.Context, repoURL string) (forge.Credentials, error)
	// BranchURL is the address of branch of the repository at repoURL.
	BranchURL(repoURL, branch string) string
}

// pushFix delivers pr to a plain remote: the fix committed on the task's
// commit and pushed to the group's branch, its trajectory to a branch of
// its own. When the group's branch is there already (an earlier delivery
// of the same failure group), the fix becomes one more commit on it, with
// the earlier one as its parent: one branch per group, never a second, and
// the same fix delivered again pushes nothing.
func (g *Forge) pushFix(ctx context.Context, b Branches, pr PullRequest) (Delivery, error) {
	t := pr.Task
	branch := Branch(t)
	log := g.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("fingerprint", t.Fingerprint), zap.String("branch", branch))
	fail := func(err error) (Delivery, error) { return Delivery{}, fmt.Errorf("publish task %s: %w", t.ID, err) }
	cred, err := b.PushCredentials(ctx, t.Repo)
	if err != nil {
		return fail(err)
	}
	mirror, err := g.Mirrors.Mirror(ctx, t.Repo, t.Commit)
	if err != nil {
		return fail(err)
	}
	pr.Summary = hideSecrets(pr.Summary, cred)
	pr.Trajectory = []byte(hideSecrets(string(pr.Trajectory), cred))
	pr.Task.Failures = redactFailures(pr.Task.Failures, cred)
	title := hideSecrets(Title(pr), cred)
	msg := commitMessage(title, pr)
	fix, err := commitPatch(ctx, mirror, t.Commit, pr.Patch, msg)
	if err != nil {
		return fail(err)
	}
	trajRef := TrajectoryRefPrefix + strings.TrimPrefix(branch, "redfix/") + "/" + refSafe(t.ID)
	body := hideSecrets(Body(pr), cred) + "\n**Attachments:** the trajectory, patch, gates and this description are on the branch " + code(trajRef) + ".\n"
	trajSHA, err := trajectoryCommit(ctx, mirror, pr, title, body)
	if err != nil {
		return fail(err)
	}
	if err := push(ctx, mirror, cred.Env, t.Repo, trajSHA, "refs/heads/"+trajRef, true); err != nil {
		return fail(fmt.Errorf("push the trajectory: %w", err))
	}
	pushed, err := g.pushOnBranch(ctx, mirror, cred.Env, t, fix, branch, msg)
	if err != nil {
		if _, derr := mirror.GitWith(context.WithoutCancel(ctx), cred.Env, "push", "--porcelain", "--", t.Repo, ":refs/heads/"+trajRef); derr != nil {
			log.Warn("delete the trajectory's branch left by a failed publish", zap.Error(derr))
		}
		return fail(err)
	}
	url := b.BranchURL(t.Repo, branch)
	log.Info("fix pushed to the remote's branch", zap.String("commit", pushed), zap.String("pull_request", url))
	return Delivery{URL: url, Description: "# " + inline(title) + "\n\n" + body}, nil
}

// pushOnBranch pushes fix to branch, or, when the branch is there, a commit
// of fix's tree on top of its head; a branch moved by another push at the
// same moment is read again. It returns the branch's new head.
func (g *Forge) pushOnBranch(ctx context.Context, mirror gitrepo.Repo, env []string, t task.Task, fix, branch, msg string) (string, error) {
	for attempt := 1; ; attempt++ {
		head, err := remoteHead(ctx, mirror, env, t.Repo, branch, t.ID)
		if err != nil {
			return "", err
		}
		next := fix
		if head != "" {
			same, err := sameTree(ctx, mirror, head, fix)
			if err != nil {
				return "", err
			}
			if same {
				return head, nil // this fix is the branch's already
			}
			tree, err := mirror.Git(ctx, "rev-parse", "--verify", fix+"^{tree}")
			if err != nil {
				return "", fmt.Errorf("the fix's tree: %w", err)
			}
			out, err := mirror.Git(ctx, "commit-tree", strings.TrimSpace(tree), "-p", head, "-m", msg)
			if err != nil {
				return "", fmt.Errorf("commit the fix on %s: %w", branch, err)
			}
			next = strings.TrimSpace(out)
		}
		err = push(ctx, mirror, env, t.Repo, next, "refs/heads/"+branch, false)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, errRejected) || attempt == takeoverAttempts {
			return "", fmt.Errorf("push %s: %w", branch, err)
		}
	}
}

// remoteHead is branch's head on remote, fetched into mirror ("" when the
// remote has no such branch).
func remoteHead(ctx context.Context, mirror gitrepo.Repo, env []string, remote, branch, taskID string) (string, error) {
	out, err := mirror.GitWith(ctx, env, "ls-remote", "--", remote, "refs/heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("read %s on the remote: %w", branch, err)
	}
	head, _, _ := strings.Cut(strings.TrimSpace(out), "\t")
	if head == "" {
		return "", nil
	}
	if err := gitrepo.CheckRevision(head); err != nil {
		return "", fmt.Errorf("read %s on the remote: %w", branch, err)
	}
	ref := "refs/redfix-publish/" + refSafe(taskID)
	if _, err := mirror.GitWith(ctx, env, "fetch", "-q", "--no-tags", "--", remote, "+refs/heads/"+branch+":"+ref); err != nil {
		return "", fmt.Errorf("fetch %s: %w", branch, err)
	}
	got, err := mirror.Resolve(ctx, ref)
	_, _ = mirror.Git(context.WithoutCancel(ctx), "update-ref", "-d", ref)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", branch, err)
	}
	return got, nil
}

// sameTree reports whether commits a and b hold the same files.
func sameTree(ctx context.Context, repo gitrepo.Repo, a, b string) (bool, error) {
	out, err := repo.Git(ctx, "rev-parse", a+"^{tree}", b+"^{tree}")
	if err != nil {
		return false, fmt.Errorf("compare %s and %s: %w", task.Short(a), task.Short(b), err)
	}
	trees := strings.Fields(out)
	return len(trees) == 2 && trees[0] == trees[1], nil
}
