package triage

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// OpenPulls counts redfix's open pull requests on a repository
// (inflight.Own), for a policy's limit on them.
type OpenPulls interface {
	OpenPullRequests(ctx context.Context, repo string) (int, error)
}

// AdmitRetry holds a retry of tk's failure group (a person's /redfix retry)
// to the rules a fresh failure of the repository meets before a job is
// queued: the central opt-out, the repository's policy (its opt-out, forks,
// its limit of open pull requests) and the daily job budget. refused says
// why not, in words for the person who asked ("" when it may go on); a
// retry that may go on has taken one of the day's jobs, and giveBack
// returns it if the job is not queued after all.
func (t *Triage) AdmitRetry(ctx context.Context, tk task.Task) (refused string, giveBack func(), err error) {
	log := t.log.With(zap.String("repo", tk.Repo), zap.String("task_id", tk.ID))
	if optedOut(t.cfg.OptOut, tk.Repo) {
		return "the repository opted out of redfix (triage.opt_out)", nil, nil
	}
	if tk.Fork != "" && !t.cfg.Forks {
		return forkReason(tk.Fork, "the central configuration does not handle forks (github.forks)"), nil, nil
	}
	var pol *repoconfig.Policy
	if t.cfg.RepoPolicies != nil {
		at := tk.Commit
		if tk.PolicyCommit != "" {
			at = tk.PolicyCommit
		}
		p, err := t.cfg.RepoPolicies.Load(ctx, tk.Repo, at)
		var inv *repoconfig.InvalidError
		switch {
		case errors.As(err, &inv):
			log.Warn("the repository's file is invalid: the central configuration applies", zap.Error(err))
		case err != nil:
			return "", nil, fmt.Errorf("read the policy of %s at %s: %w", tk.Repo, task.Short(at), err)
		}
		pol = &p
		if reason := optedOutByFile(pol); reason != "" {
			return reason, nil, nil
		}
		if tk.Fork != "" && !pol.Forks {
			return forkReason(tk.Fork, "refused by its "+pol.Source+" (forks: false)"), nil, nil
		}
		if n := pol.OpenPullRequests; n > 0 && t.cfg.OpenPulls != nil {
			open, err := t.cfg.OpenPulls.OpenPullRequests(ctx, tk.Repo)
			if err != nil {
				return "", nil, fmt.Errorf("count the open pull requests of %s: %w", tk.Repo, err)
			}
			if open >= n {
				return fmt.Sprintf("%d of the repository's limit of %d open pull requests by redfix are open (%s limits.open_pull_requests)", open, n, pol.Source), nil, nil
			}
		}
	}
	scratch := tk
	reason, giveBack, err := t.takeBudget(ctx, tk.Repo, t.dailyLimitWith(tk.Repo, pol), &scratch, log)
	if err != nil {
		return "", nil, fmt.Errorf("daily job budget of %s: %w", tk.Repo, err)
	}
	return reason, giveBack, nil
}
