package worker

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// repoPolicy is t's repository policy at its commit (nil without
// RepoPolicies), and, when it stops the task before any work, the outcome
// that says why: the repository opted out, or its limit of open pull
// requests is reached. An invalid file is logged (the loader reported it
// to the repository) and the central policy applies.
func (p *Pipeline) repoPolicy(ctx context.Context, t task.Task, log *zap.Logger) (*repoconfig.Policy, Outcome, error) {
	if p.RepoPolicies == nil {
		return nil, Outcome{}, nil
	}
	// A fork's task is governed by the default branch's file, as triage
	// read it (task.Task.PolicyCommit), never by the fork's own copy.
	at := t.Commit
	if t.PolicyCommit != "" {
		at = t.PolicyCommit
	}
	pol, err := p.RepoPolicies.Load(ctx, t.Repo, at)
	var inv *repoconfig.InvalidError
	switch {
	case errors.As(err, &inv):
		log.Warn("the repository's file is invalid: the central configuration applies", zap.Error(err))
		p.progress("policy", "%v; the central configuration applies", err)
	case err != nil:
		return nil, Outcome{}, fmt.Errorf("read the policy of %s at %s: %w", t.Repo, task.Short(at), err)
	}
	if !pol.Enabled {
		return &pol, Outcome{Status: task.StatusDropped, Reason: "repository opted out in its " + pol.Source + " (enabled: false)"}, nil
	}
	if n := pol.OpenPullRequests; n > 0 && p.OpenPulls != nil {
		open, err := p.OpenPulls.OpenPullRequests(ctx, t.Repo)
		if err != nil {
			return nil, Outcome{}, fmt.Errorf("count the open pull requests of %s: %w", t.Repo, err)
		}
		if open >= n {
			reason := fmt.Sprintf("refused: %d of the repository's limit of %d open pull requests are open (%s)", open, n, pol.Source)
			log.Info("task refused by the repository's limit", zap.String("reason", reason))
			return &pol, Outcome{Status: task.StatusOverBudget, Reason: reason}, nil
		}
	}
	return &pol, Outcome{}, nil
}

// paths is the policy as the gates' paths rule, or nil when it names no
// paths.
func paths(pol *repoconfig.Policy) pathRule {
	if pol == nil || len(pol.Allow) == 0 && len(pol.Deny) == 0 {
		return nil
	}
	return pol
}

// pathRule is what the gates and the agent's edits ask of the policy.
type pathRule interface {
	PathAllowed(path string) (ok bool, rule string)
}

// reviewers and labels are what the policy asks for on the pull request.
func reviewers(pol *repoconfig.Policy) []string {
	if pol == nil {
		return nil
	}
	return pol.Reviewers
}

func labels(pol *repoconfig.Policy) []string {
	if pol == nil {
		return nil
	}
	return pol.Labels
}

// jobLanguageOf is a job's driver as the policy names it: its driver ("" to
// detect) and its test settings.
func jobLanguageOf(pol *repoconfig.Policy) *jobLanguage {
	if pol == nil {
		return &jobLanguage{}
	}
	return &jobLanguage{driver: pol.Driver, tests: pol.Tests, source: pol.Source}
}
