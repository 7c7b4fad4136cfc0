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
		commit, err := p.policyCommit(ctx, log)
		if err != nil {
			return nil, err
		}
		pol, err := p.t.cfg.RepoPolicies.Load(ctx, p.in.Repo, commit)
		var inv *repoconfig.InvalidError
		switch {
		case errors.As(err, &inv):
			log.Warn("the repository's file is invalid: the central configuration applies", zap.Error(err))
		case err != nil:
			return nil, fmt.Errorf("read the policy of %s at %s: %w", p.in.Repo, task.Short(commit), err)
		}
		p.policy, p.policyRead, p.policyAt = &pol, true, commit
	}
	return p.policy, nil
}

// errForkHead is a fork's report whose policy cannot be read: the default
// branch's head is unknown.
var errForkHead = errors.New("the default branch's head is unknown")

// policyCommit is where the report's policy is read: at its commit, or,
// for a pull request from a fork, at the default branch's head. The fork's
// copy of .redfix.yaml is its author's to write: read there, a fork could
// leave out what its repository narrows (forks: false, a lower limit).
func (p *process) policyCommit(ctx context.Context, log *zap.Logger) (string, error) {
	if p.in.Fork == "" {
		return p.in.Commit, nil
	}
	if _, head, ok := p.defaultHead(ctx, log); ok {
		return head, nil
	}
	return "", fmt.Errorf("%w: %w", errForkHead, p.headErr)
}

// ForkOptIn is the central configuration's opt-in to change requests
// from forks, which may differ from one forge to the next: whether
// repo's are handled, and the setting that says so ("github.forks"), for
// the words of a refusal.
type ForkOptIn interface {
	ForksHandled(repo string) (handled bool, setting string)
}

// centralForks is the opt-in's answer for repo; without an opt-in, forks
// are handled nowhere.
func (t *Triage) centralForks(repo string) (bool, string) {
	if t.cfg.Forks == nil {
		return false, "no setting handles them"
	}
	return t.cfg.Forks.ForksHandled(repo)
}

// centralRefusal is the refusal's words when the central configuration
// does not handle repo's forks ("" when it does).
func (t *Triage) centralRefusal(repo string) string {
	ok, setting := t.centralForks(repo)
	if ok {
		return ""
	}
	return "the central configuration does not handle forks (" + setting + ")"
}

// RuleFork records whether a report from a fork is handled.
const RuleFork = "pull_request_from_fork"

// forkRefused is the drop reason of a report from a fork that is not
// handled: the central configuration does not handle forks, the
// repository's policy on its default branch says forks: false, or that
// policy cannot be read. "" for a report that is handled, and for the
// repository's own.
func (p *process) forkRefused(ctx context.Context, tk *task.Task, log *zap.Logger) (string, error) {
	fork := p.in.Fork
	if fork == "" {
		return "", nil
	}
	tk.Fork = fork
	refuse := func(why string) (string, error) {
		reason := forkReason(fork, why)
		addRule(tk, RuleFork, task.RuleDrop, reason)
		return reason, nil
	}
	if why := p.t.centralRefusal(p.in.Repo); why != "" {
		return refuse(why)
	}
	if p.t.cfg.RepoPolicies == nil {
		addRule(tk, RuleFork, task.RulePass, "from "+fork+": the central configuration handles forks")
		return "", nil
	}
	pol, err := p.repoPolicy(ctx, log)
	switch {
	case errors.Is(err, errForkHead):
		return refuse("its repository's " + repoconfig.FileName + " could not be read on the default branch (" + err.Error() + ")")
	case err != nil:
		return "", err
	}
	tk.PolicyCommit = p.policyAt
	if !pol.Forks {
		return refuse("refused by its " + pol.Source + " (forks: false)")
	}
	allow := "the central configuration allows"
	if pol.Source != repoconfig.FromCentral(repoconfig.Central{}).Source {
		allow = "the central configuration and " + pol.Source + " allow"
	}
	addRule(tk, RuleFork, task.RulePass, "from "+fork+": handled, as "+allow)
	return "", nil
}

func forkReason(fork, why string) string {
	return "pull request from a fork (" + fork + "): not handled: " + why
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
