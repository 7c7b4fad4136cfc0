package triage

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// RepoPolicies reads a repository's policy at a commit (repoconfig.Loader):
// the central configuration narrowed by its .redfix.yaml. An invalid file
// comes as a *repoconfig.InvalidError with the central policy, which
// applies (the loader reported it); any other error is the machinery's.
type RepoPolicies interface {
	Load(ctx context.Context, repo, commit string) (repoconfig.Policy, error)
}

// repoPolicy is the report's repository policy at its commit, read once
// per report; nil without Config.RepoPolicies.
func (p *process) repoPolicy(ctx context.Context, log *zap.Logger) (*repoconfig.Policy, error) {
	if p.t.cfg.RepoPolicies == nil {
		return nil, nil
	}
	if !p.policyRead {
		pol, err := p.t.cfg.RepoPolicies.Load(ctx, p.in.Repo, p.in.Commit)
		var inv *repoconfig.InvalidError
		switch {
		case errors.As(err, &inv):
			log.Warn("the repository's file is invalid: the central configuration applies", zap.Error(err))
		case err != nil:
			return nil, fmt.Errorf("read the policy of %s at %s: %w", p.in.Repo, task.Short(p.in.Commit), err)
		}
		p.policy, p.policyRead = &pol, true
	}
	return p.policy, nil
}

// optedOutByFile is the drop reason of a repository whose policy turns
// redfix off ("" when it does not). It is counted with the central
// opt-outs (ReasonOptedOut).
func optedOutByFile(pol *repoconfig.Policy) string {
	if pol == nil || pol.Enabled {
		return ""
	}
	return "repository opted out in its " + pol.Source + " (enabled: false)"
}

// dailyLimitWith is the daily job limit with the policy's narrowing: the
// smaller of the central one and the repository's own (0: none).
func (t *Triage) dailyLimitWith(repo string, pol *repoconfig.Policy) int {
	limit := t.dailyLimit(repo)
	if pol != nil && pol.RepairsPerDay > 0 && (limit == 0 || pol.RepairsPerDay < limit) {
		return pol.RepairsPerDay
	}
	return limit
}
